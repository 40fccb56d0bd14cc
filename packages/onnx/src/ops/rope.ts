import type { RopeAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/** DataType.DOUBLE and FLOAT for Cast's `to`. */
const DOUBLE = 11;
const FLOAT = 1;

/**
 * rope: split-half rotary embedding. For p = positionOffset + l and i < r/2, θ = p · base^(−2i/r) and the pair
 * (x[i], x[i + r/2]) turns by θ (−θ with `inverse`); dims r..D−1 pass through. The angles and their cos and sin are
 * computed in double, as the cpu kernel does (float32 angles lose the low bits at large positions), then cast to float.
 */
export const rope: OpLowering = (l) => {
  const a = l.node.attrs as unknown as RopeAttrs;
  const x = l.required("x");
  const dims = l.shapeOf("x");
  const d = l.known(dims[3]!);
  const r =
    a.rotaryDim ??
    d ??
    l.unsupported("RoPE over the whole head dim needs D at export time", "a numeric D or rotaryDim", String(dims[3]));
  const half = r / 2;
  const invFreq = Array.from({ length: half }, (_, i) => a.base ** ((-2 * i) / r));
  const L = l.dimScalar({ of: x, axis: 2 });
  const steps = l.emit("Range", [l.constant("int64", [0], []), L, l.constant("int64", [1], [])]);
  // A decode graph's offset is a dim bound per call (N): read at run time (an exported decode model has N = P, the
  // past input's length: decode-caches.ts); a symbolic offset no input carries fails the export naming it.
  const offset =
    typeof a.positionOffset === "number"
      ? l.constant("double", [a.positionOffset], [])
      : l.emit("Cast", [l.dimScalar(a.positionOffset)], { to: DOUBLE });
  const positions = l.emit("Add", [l.emit("Cast", [steps], { to: DOUBLE }), offset]);
  const theta = l.emit("Mul", [
    l.emit("Unsqueeze", [positions, l.constant("int64", [1])]),
    l.constant("double", invFreq, [1, half]),
  ]); // [L, r/2]
  const cos = l.emit("Cast", [l.emit("Cos", [theta])], { to: FLOAT });
  const sinD = l.emit("Sin", [theta]);
  const sin = l.emit("Cast", [a.inverse ? l.emit("Neg", [sinD]) : sinD], { to: FLOAT });
  const part = (from: number, to: number) =>
    l.emit("Slice", [x, l.constant("int64", [from]), l.constant("int64", [to]), l.constant("int64", [3])]);
  const x1 = part(0, half);
  const x2 = part(half, r);
  const out1 = l.emit("Sub", [l.emit("Mul", [x1, cos]), l.emit("Mul", [x2, sin])]);
  const out2 = l.emit("Add", [l.emit("Mul", [x2, cos]), l.emit("Mul", [x1, sin])]);
  // Dims past r pass through; whether there are any is known only for a numeric D (a symbolic D with rotaryDim
  // takes the rest as a slice to the end, empty when r = D).
  const rest = d === r ? [] : [part(r, Number.MAX_SAFE_INTEGER)];
  return l.emit("Concat", [out1, out2, ...rest], { axis: 3 });
};
