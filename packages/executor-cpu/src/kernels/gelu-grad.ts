// gelu-grad: GELU's input gradient, grad · gelu'(x) elementwise in float64, stored as float32, in the same two forms as
// the forward kernel (and its erf; geluDerivative in gelu.ts). The strided loop is elementwise-pair.ts's.
import type { GeluGradAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writePairRows } from "./elementwise-pair.js";

/** Inputs: grad [...], x [...] (the forward input); attrs { approximate: "none" | "tanh" } → x's shape. */
export const geluGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const tanh = attrsOf<GeluGradAttrs>(call).approximate === "tanh";
  return writePairRows(call, chunkWork, tanh ? "gelu-grad-tanh" : "gelu-grad", x, grad);
});
