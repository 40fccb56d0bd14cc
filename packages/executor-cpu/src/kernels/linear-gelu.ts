// linear-gelu: the fused first half of a transformer MLP, gelu(x · Wᵀ + b). Each chunk of rows is projected and then
// activated while it is still in cache: the pre-activation never becomes a value of its own.
import { afterwards, overRows, type LinearGeluAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, result, attrsOf } from "./adapter.js";
import { gelu } from "./gelu.js";
import { projectionImpl, projectionInputs } from "./projection.js";
import { rowCount } from "./strided.js";

/** Inputs: x [..., In], weight [Out, In], optional bias [Out]; attrs { approximate } → [..., Out]. */
export const linearGeluKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const { x, w, b, nIn, nOut, shape } = projectionInputs(call);
  const tanh = attrsOf<LinearGeluAttrs>(call).approximate === "tanh";
  const rows = rowCount(x.shape);
  const y = outData(call, shape) ?? new Float32Array(rows * nOut);
  const pending = overRows(call, chunkWork, rows, nIn * nOut, (start, end) => {
    projectionImpl(x, w, b, y, { start, end });
    // gelu of the float32-rounded pre-activation, exactly what the unfused pair computes
    for (let i = start * nOut; i < end * nOut; i++) y[i] = gelu(y[i]!, tanh);
  });
  return afterwards(pending, () => result(call, y, shape));
});
