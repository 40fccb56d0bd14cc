// add and mul: elementwise sum and product with broadcasting — residual connections (x + attention), positional
// embeddings added over the batch (pos_embed [1, T, E]), the gate of a SiLU-gated MLP (silu(gate) · up). Each input is
// read through strides that are 0 on the axes it stretches (broadcastView), so nothing is materialised; the strided
// loop over the broadcast rows is elementwise-pair.ts's, in float64 and stored as float32: a sum or product of two
// float32s is exact there and rounds once, as float32 arithmetic (PyTorch's) does.
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput } from "./adapter.js";
import { broadcastView } from "./broadcast-view.js";
import { writePairRows } from "./elementwise-pair.js";

/** The kernel of `op`. Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export function broadcastKernel(op: "add" | "mul") {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const a = requireInput(call, 0, "a");
    const b = requireInput(call, 1, "b");
    const shape = call.outShape; // the broadcast shape of a and b: the op's shape rule, which checkCall held it to
    return writePairRows(call, chunkWork, op, broadcastView(a, shape), broadcastView(b, shape));
  });
}

/** Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export const addKernel = broadcastKernel("add");
