import type { AttentionAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { groupedMatMul, scores } from "./heads.js";
import { maskedSoftmax } from "./masked-softmax.js";
import { requireNoDropout } from "./no-dropout.js";
import { anyHidden, hide, paddingHidden, positionHidden } from "./positions.js";

/**
 * attention (the fused op): score → mask (position, padding) → softmax(scale) → weighted-sum written out as the same
 * plain ops as its parts, so it gives the chain's numbers. q [B, H, L, D], k, v [B, Hkv, S, D] → [B, H, L, D].
 * com.microsoft MultiHeadAttention is not used: it wants [B, L, H·D] queries (a transpose each way), and its masking
 * of a fully masked row and its bottom-right causal alignment differ from attngraph's.
 */
export const attention: OpLowering = (l) => {
  const a = l.node.attrs as unknown as AttentionAttrs;
  requireNoDropout(l, a.dropoutRate, a.training, { rate: "dropoutRate" });
  if (l.contrib) l.plainBecause("MultiHeadAttention wants [B, L, H·D] queries and masks fully masked rows differently");
  const q = l.required("q");
  const s = scores(l, q, l.required("k"), l.shapeOf("q"), l.shapeOf("k")); // [B, H, L, S]
  const pad = l.input("keyPaddingMask");
  const masked = hide(
    l,
    s,
    anyHidden(l, [positionHidden(l, s, a), pad === undefined ? undefined : paddingHidden(l, pad)]),
  );
  const weights = maskedSoftmax(l, masked, a.scale);
  return groupedMatMul(l, weights, l.required("v"), l.shapeOf("q")[1]!, l.shapeOf("v")[1]!); // [B, H, L, D]
};
