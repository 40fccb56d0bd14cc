import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";
import { expectDim } from "./shape-checks.js";

export interface LinearWeightGradAttrs {}

/**
 * The weight gradient of `y = x · Wᵀ (+ b)`: dW = Σ over every leading position of gradᵀ · x, i.e. dW[o, i] =
 * Σ_r grad[r, o] · x[r, i] with the leading axes flattened into r. grad [..., Out], x [..., In] → [Out, In].
 */
export const linearWeightGradOp = defineOp<LinearWeightGradAttrs>({
  kind: "linear-weight-grad",
  doc: "Weight gradient of a projection: Σ over leading positions of gradᵀ · x → [Out, In].",
  inputs: [
    { name: "grad", doc: "[..., Out], the gradient of the projection's output" },
    { name: "x", doc: "[..., In], the projection's input" },
  ],
  attrs: {},
  inferShape: ([g, x], _attrs, ctx) => {
    if (g!.length < 1)
      ctx.fail("grad", "the gradient of a projection's output has its features axis", "[..., Out]", formatDims(g!));
    if (g!.length !== x!.length)
      ctx.fail("x", "grad and x must have the same leading axes", `rank ${g!.length}`, formatDims(x!));
    for (let i = 0; i < g!.length - 1; i++)
      expectDim(ctx, "x", `x dim ${i} must match the gradient's`, g![i]!, x![i]!, x);
    return [g![g!.length - 1]!, x![x!.length - 1]!];
  },
});
