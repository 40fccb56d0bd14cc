// mul: a · b with NumPy broadcasting, any strides on both: add's layout (mergeAxes, addBlocks) with the module's mul
// (assembly/mul.ts) in place of its add. With a signal, a big call runs in chunks of rows.
import { addShape } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { requireInput } from "./adapter.js";
import { broadcastPair } from "./add.js";

/** Inputs: a [...], b [...] broadcastable with a → the broadcast shape (which must be `call.outShape`). */
export const mulKernel = chunkedKernel((call, ctx) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const shape = addShape(call, a, b);
  return broadcastPair(call, ctx, a, b, shape, "mul");
});
