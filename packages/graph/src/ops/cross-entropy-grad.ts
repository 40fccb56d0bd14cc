import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";
import { expectDim } from "./shape-checks.js";
import { expectLogitsAndTargets, type CrossEntropyAttrs } from "./cross-entropy.js";

export type CrossEntropyGradAttrs = CrossEntropyAttrs;

/**
 * The logits gradient of cross-entropy: per counted position (softmax(logits) − onehot(target)) times the loss's
 * gradient (divided by the count of counted positions for "mean"); ignored positions get 0. `grad` is the loss's
 * gradient: [] for "mean"/"sum", shaped like targets for "none"; absent means 1 (the loss is what is differentiated).
 * logits [..., V], targets [...] int32 → [..., V].
 */
export const crossEntropyGradOp = defineOp<CrossEntropyGradAttrs>({
  kind: "cross-entropy-grad",
  doc: "Cross-entropy backward: (softmax(logits) − onehot(target)) · grad (/ count for mean); ignored positions 0.",
  inputs: [
    { name: "logits", doc: "[..., V]" },
    { name: "targets", dtype: "int32", doc: "[...] int32" },
    { name: "grad", optional: true, doc: "[] (mean, sum) or [...] (none); absent = 1" },
  ],
  attrs: {
    ignoreIndex: { type: "integer", nullable: true, min: -(2 ** 31), max: 2 ** 31 - 1 },
    reduction: { type: "string", default: "mean", oneOf: ["mean", "sum", "none"] },
  },
  inferShape: ([l, t, g], { reduction }, ctx) => {
    expectLogitsAndTargets(l!, t!, ctx);
    if (g) {
      const want = reduction === "none" ? t! : [];
      if (g.length !== want.length)
        ctx.fail("grad", "the loss gradient must have the loss's shape", formatDims(want), formatDims(g));
      want.forEach((d, i) => expectDim(ctx, "grad", `grad dim ${i} must match the targets`, d, g[i]!, g));
    }
    return l!;
  },
});
