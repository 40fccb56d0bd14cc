// mul: a · b with NumPy broadcasting, any strides on both: add's layout (mergeAxes, addBlocks) with the module's mul
// (assembly/mul.ts) in place of its add. With a signal, a big call runs in chunks of rows.
import { chunkedKernel } from "../chunks.js";
import { broadcastPair } from "./add.js";

/** Inputs: a [...], b [...] broadcastable with a → the broadcast shape (`call.outShape`, by the shape rule). */
export const mulKernel = chunkedKernel((call, ctx) => broadcastPair(call, ctx, "mul"));
