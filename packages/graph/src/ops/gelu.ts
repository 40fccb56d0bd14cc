import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface GeluAttrs {
  /**
   * "none": the exact form x · Φ(x) = x/2 · (1 + erf(x/√2)), PyTorch's default. "tanh": the approximation
   * x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))), PyTorch's `approximate="tanh"` (GPT-2's `gelu_new`).
   */
  readonly approximate: "none" | "tanh";
}

/** GELU elementwise, PyTorch `nn.GELU(approximate=...)`. x [...] → same shape. */
export const geluOp = defineOp<GeluAttrs>({
  kind: "gelu",
  doc: 'GELU elementwise: exact erf form (approximate "none", PyTorch\'s default) or the tanh approximation.',
  inputs: [{ name: "x", doc: "[...]" }],
  attrs: { approximate: { type: "string", default: "none", oneOf: ["none", "tanh"] } },
  inPlace: 0,
  inferShape: ([x]) => x!,
  vjp: (ctx) => [
    ctx.addGrad(
      0,
      "gelu-grad",
      { grad: gradOf(ctx, "gelu"), x: ctx.inputs[0] },
      { approximate: ctx.attrs.approximate },
    ),
  ],
});
