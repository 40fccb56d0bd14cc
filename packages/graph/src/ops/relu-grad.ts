import { defineOp } from "../op-def.js";
import { expectSameShape } from "./shape-checks.js";

export interface ReluGradAttrs {}

/**
 * The input gradient of ReLU from its output: 0 where y <= 0, else grad (PyTorch's threshold_backward, so a NaN y lets
 * grad through and the derivative at 0 is 0). grad [...], y [...] → same.
 */
export const reluGradOp = defineOp<ReluGradAttrs>({
  kind: "relu-grad",
  doc: "ReLU backward from the forward output: grad where y > 0 (or y is NaN), else 0, as PyTorch's.",
  inputs: [
    { name: "grad", doc: "[...]" },
    { name: "y", doc: "[...], the forward output" },
  ],
  attrs: {},
  inferShape: ([g, y], _attrs, ctx) => {
    expectSameShape(ctx, "y", g!, y!);
    return y!;
  },
});
