import { defineOp } from "../op-def.js";
import type { GeluAttrs } from "./gelu.js";
import { linearInputs, linearShape } from "./projection.js";
import { gelu } from "./vjp-fused.js";

export interface LinearGeluAttrs {
  /** As gelu: "none" (exact erf form) or "tanh". */
  readonly approximate: GeluAttrs["approximate"];
}

/**
 * projection → gelu in one step: gelu(x · Wᵀ + b), the first half of a transformer MLP. The scheduler's fusion pass puts
 * it in place of the pair when nothing else reads or watches the projection's output (the pre-activation); the step
 * keeps the gelu node's name. Same numbers as the pair. x [..., In], weight [Out, In], bias [Out] → [..., Out].
 */
export const linearGeluOp = defineOp<LinearGeluAttrs>({
  kind: "linear-gelu",
  doc: "Fused projection → gelu: gelu(x · Wᵀ + b); the fusion pass uses it when nobody watches the pre-activation.",
  inputs: linearInputs(),
  attrs: { approximate: { type: "string", default: "none", oneOf: ["none", "tanh"] } },
  inferShape: linearShape,
  // Recomputes the pre-activation (the fused step never kept it), then GELU's and the projection's rules.
  vjp: (ctx) => gelu(ctx),
});
