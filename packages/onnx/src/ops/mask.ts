import { USER_MASK_AXES, type MaskAttrs } from "@attngraph/graph";
import type { Lowering, OpLowering } from "../lowering.js";
import { anyHidden, hide, paddingHidden, positionHidden } from "./positions.js";

/**
 * mask: keys hidden by position (causal, window), padding or a 0/1 user mask become −∞ (composed by "or"); visible
 * scores become scale · score + bias. As in the cpu kernel, a score that is already −∞ stays −∞ whatever the scale and
 * bias (0 · −∞ would be NaN).
 */
export const mask: OpLowering = (l) => {
  const a = l.node.attrs as unknown as MaskAttrs;
  const scores = l.required("scores");
  const pad = l.input("keyPaddingMask");
  const user = l.input("mask");
  const bias = l.input("bias");
  const transformed = a.scale !== 1 || bias !== undefined;
  const hidden = anyHidden(l, [
    positionHidden(l, scores, a),
    pad === undefined ? undefined : paddingHidden(l, pad),
    user === undefined ? undefined : userHidden(l, user, l.shapeOf("mask").length),
    transformed ? l.emit("IsInf", [scores], { detect_positive: 0 }) : undefined,
  ]);
  let values = a.scale === 1 ? scores : l.emit("Mul", [scores, l.constant("float", [a.scale], [])]);
  if (bias !== undefined) values = l.emit("Add", [values, asScoresRank(l, bias, l.shapeOf("bias").length)]);
  return hide(l, values, hidden);
};

/** A user mask [L, S], [B, L, S] or [B, H, L, S] of 0/1 as "hidden" broadcastable to [B, H, L, S]. */
function userHidden(l: Lowering, m: string, rank: number): string {
  return asScoresRank(l, l.emit("Equal", [m, l.constant("float", [0], [])]), rank);
}

/** A rank-3 mask or bias is per batch, [B, L, S]: it gets a head axis of 1; ranks 2 and 4 broadcast as they are. */
function asScoresRank(l: Lowering, value: string, rank: number): string {
  const axes = USER_MASK_AXES[rank]!;
  return axes.length === 3 ? l.emit("Unsqueeze", [value, l.constant("int64", [1])]) : value;
}
