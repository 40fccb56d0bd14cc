import { definePointwiseOp } from "./pointwise.js";

const x = { op: "input", name: "x", index: [] } as const;

/**
 * ReLU elementwise, PyTorch `nn.ReLU` (`TransformerEncoderLayer`'s default activation): 0 where x <= 0, else x, so NaN
 * passes through as `torch.relu` does (clamp_min propagates NaN) and −0 gives +0. Declared as its expression: the
 * gradient is derived as a select (grad where x > 0 or x is NaN, else 0: PyTorch's threshold_backward, so an infinite
 * grad where x <= 0 gives 0, and the derivative at 0 is 0). x [...] → same shape.
 */
export const reluOp = definePointwiseOp({
  kind: "relu",
  doc: "ReLU elementwise: max(x, 0); NaN stays NaN (torch.relu).",
  inputs: [{ name: "x", doc: "[...]" }],
  expr: { op: "where", args: [{ op: "le", args: [x, 0] }, 0, x] },
});
