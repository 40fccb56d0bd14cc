import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface SiluAttrs {}

/**
 * SiLU (swish) elementwise, PyTorch `nn.SiLU` / `F.silu`: x · sigmoid(x), the gate activation of Llama's MLP
 * (`down(silu(gate(x)) · up(x))`). Kernels use a sigmoid that never overflows (exp of −|x| only), so a large |x| gives
 * −0 or x, never NaN; silu(−∞) is NaN (−∞ · 0) and silu(+∞) = +∞, as torch's. x [...] → same shape.
 */
export const siluOp = defineOp<SiluAttrs>({
  kind: "silu",
  doc: "SiLU elementwise: x · sigmoid(x) (F.silu); no overflow to NaN for large inputs.",
  inputs: [{ name: "x", doc: "[...]" }],
  attrs: {},
  inPlace: 0,
  inferShape: ([x]) => x!,
  vjp: (ctx) => [ctx.addGrad(0, "silu-grad", { grad: gradOf(ctx, "silu"), x: ctx.inputs[0] })],
});
