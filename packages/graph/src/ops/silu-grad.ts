import { defineOp } from "../op-def.js";
import { expectSameShape } from "./shape-checks.js";

export interface SiluGradAttrs {}

/**
 * The input gradient of SiLU from its input (PyTorch's silu_backward): grad · s · (1 + x · (1 − s)), s = sigmoid(x).
 * grad [...], x [...] → same.
 */
export const siluGradOp = defineOp<SiluGradAttrs>({
  kind: "silu-grad",
  doc: "SiLU backward: grad · s · (1 + x · (1 − s)) with s = sigmoid(x), as PyTorch's silu_backward.",
  inputs: [
    { name: "grad", doc: "[...]" },
    { name: "x", doc: "[...], the forward input" },
  ],
  attrs: {},
  inferShape: ([g, x], _attrs, ctx) => {
    expectSameShape(ctx, "x", g!, x!);
    return x!;
  },
});
