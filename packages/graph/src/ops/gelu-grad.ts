import { defineOp } from "../op-def.js";
import { expectSameShape } from "./shape-checks.js";
import type { GeluAttrs } from "./gelu.js";

export type GeluGradAttrs = GeluAttrs;

/**
 * The input gradient of GELU: grad · gelu'(x). Exact form: Φ(x) + x·φ(x). Tanh form: with u = √(2/π)(x + 0.044715x³),
 * ½(1 + tanh u) + ½x(1 − tanh²u)·√(2/π)(1 + 3·0.044715x²). grad [...], x [...] → same.
 */
export const geluGradOp = defineOp<GeluGradAttrs>({
  kind: "gelu-grad",
  doc: "GELU backward: grad · gelu'(x), exact (erf) or tanh form.",
  inputs: [
    { name: "grad", doc: "[...]" },
    { name: "x", doc: "[...], the forward input" },
  ],
  attrs: { approximate: { type: "string", default: "none", oneOf: ["none", "tanh"] } },
  inferShape: ([g, x], _attrs, ctx) => {
    expectSameShape(ctx, "x", g!, x!);
    return x!;
  },
});
