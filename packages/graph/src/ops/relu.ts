import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface ReluAttrs {}

/**
 * ReLU elementwise, PyTorch `nn.ReLU` (`TransformerEncoderLayer`'s default activation): max(x, 0), with NaN passed
 * through as `torch.relu` does (clamp_min propagates NaN). x [...] → same shape.
 */
export const reluOp = defineOp<ReluAttrs>({
  kind: "relu",
  doc: "ReLU elementwise: max(x, 0); NaN stays NaN (torch.relu).",
  inputs: [{ name: "x", doc: "[...]" }],
  attrs: {},
  inPlace: 0,
  inferShape: ([x]) => x!,
  // The backward reads the output, as PyTorch's does (threshold_backward(grad, result, 0)): y > 0 exactly where x > 0.
  vjp: (ctx) => [ctx.addGrad(0, "relu-grad", { grad: gradOf(ctx, "relu"), y: ctx.output })],
});
