import type { AlibiAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { positionGrid } from "./positions.js";

/**
 * alibi: scale · scores + m_h · (j − pos), with pos the query's key position after alignment; a −∞ score stays −∞.
 * The slopes are constants of the model, so H must be known at export when they are the paper's (slopes: null).
 */
export const alibi: OpLowering = (l) => {
  const a = l.node.attrs as unknown as AlibiAttrs;
  const scores = l.required("scores");
  const h = l.known(l.shapeOf("scores")[1]!);
  const slopes =
    a.slopes ??
    (h === undefined
      ? l.unsupported(
          "the paper's slopes need the head count H at export time",
          "a numeric H or explicit slopes",
          String(l.shapeOf("scores")[1]),
        )
      : paperSlopes(h));
  const { pos, key } = positionGrid(l, scores, a.alignment);
  const distance = l.emit("Cast", [l.emit("Sub", [key, pos])], { to: 1 }); // [L, S] float: j − pos
  const bias = l.emit("Mul", [l.constant("float", slopes, [1, slopes.length, 1, 1]), distance]); // [1, H, L, S]
  const scaled = a.scale === 1 ? scores : l.emit("Mul", [scores, l.constant("float", [a.scale], [])]);
  const biased = l.emit("Add", [scaled, bias]);
  const masked = l.emit("IsInf", [scores], { detect_positive: 0 });
  return l.emit("Where", [masked, l.constant("float", [-Infinity], []), biased]);
};

/**
 * The ALiBi paper's slopes for H heads (its `get_slopes`, in the closed form the op's doc gives): with n the largest
 * power of two <= H, head h < n gets 2^(−8(h+1)/n) and head n + k gets 2^(−4(2k+1)/n).
 */
function paperSlopes(h: number): number[] {
  const n = 2 ** Math.floor(Math.log2(h));
  return Array.from({ length: h }, (_, i) => (i < n ? 2 ** ((-8 * (i + 1)) / n) : 2 ** ((-4 * (2 * (i - n) + 1)) / n)));
}
