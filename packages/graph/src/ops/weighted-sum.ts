import { defineOp } from "../op-def.js";
import { expectDim, expectHeadGroups } from "./shape-checks.js";

export interface WeightedSumAttrs {}

/** weights · V per batch and head. weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]; value heads shared like keys. */
export const weightedSumOp = defineOp<WeightedSumAttrs>({
  kind: "weighted-sum",
  doc: "weights · V per batch and head; value heads are shared by H/Hkv consecutive query heads.",
  inputs: [
    { name: "weights", rank: 4, doc: "[B, H, L, S]" },
    { name: "v", rank: 4, doc: "[B, Hkv, S, D]" },
  ],
  attrs: {},
  inferShape: ([w, v], _attrs, ctx) => {
    const [b, h, l, s] = w!;
    expectDim(ctx, "v", "batch of values must match the weights", b!, v![0]!, v);
    expectHeadGroups(ctx, "v", h!, v![1]!);
    expectDim(ctx, "v", "value length must equal the key length S", s!, v![2]!, v);
    return [b!, h!, l!, v![3]!];
  },
});
