import { definePointwiseOp } from "./pointwise.js";

const x = { op: "input", name: "x", index: [] } as const;

/**
 * SiLU (swish) elementwise, PyTorch `nn.SiLU` / `F.silu`: x · sigmoid(x), the gate activation of Llama's MLP
 * (`down(silu(gate(x)) · up(x))`). Declared as its expression: the gradient (PyTorch's silu_backward,
 * grad · (s + x · s · (1 − s))) is derived, and every executor runs it through its pointwise kernel. A large |x| gives
 * −0 or x, never NaN; silu(−∞) is NaN (−∞ · 0) and silu(+∞) = +∞, as torch's. x [...] → same shape.
 */
export const siluOp = definePointwiseOp({
  kind: "silu",
  doc: "SiLU elementwise: x · sigmoid(x) (F.silu); no overflow to NaN for large inputs.",
  inputs: [{ name: "x", doc: "[...]" }],
  expr: { op: "mul", args: [x, { op: "sigmoid", args: [x] }] },
});
