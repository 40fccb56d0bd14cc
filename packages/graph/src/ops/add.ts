import { BROADCAST_BINARY } from "./broadcast-binary.js";
import { defineOp } from "../op-def.js";
import { gradOf, unbroadcast } from "../vjp-helpers.js";

export interface AddAttrs {}

/**
 * a + b elementwise with NumPy/PyTorch broadcasting: shapes line up from the last axis, and a dim of 1 (or a missing
 * leading dim) stretches to the other's. Residual connections (`x + attention`) and a learned positional embedding
 * `pos_embed [1, T, E]` added over the batch. a [...], b [...] → the broadcast shape.
 */
export const addOp = defineOp<AddAttrs>({
  kind: "add",
  doc: "a + b elementwise, with broadcasting (shapes aligned from the last axis, dims of 1 stretch): residuals, positional embeddings.",
  ...BROADCAST_BINARY,
  // Each side gets the gradient, summed over the axes it was broadcast along.
  vjp: (ctx) => {
    const g = gradOf(ctx, "add");
    return ctx.inputs.map((v, i) =>
      v !== undefined && ctx.needs(i) ? unbroadcast(ctx, i, g, ctx.shapeOf(v)) : undefined,
    );
  },
});
