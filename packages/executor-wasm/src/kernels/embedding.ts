// embedding: rows of a [V, E] table by int32 id (nn.Embedding). Every id is checked against [0, V) on the host first
// (findBadIndex: an "input" error naming the node, the position and the id), before the output is even allocated, so
// a bad id never reaches the module and nothing is written. Then one row copy per position in the module
// (assembly/embedding.ts); ids and weight may be any views. With a signal, a big call runs in chunks of positions.
import { findBadIndex } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { fillingChunked, requireInput } from "./adapter.js";
import { hostElements } from "./host-read.js";
import { writeIntFields } from "./params-block.js";

/** Inputs: ids [...] int32, weight [V, E] → [..., E]. */
export const embeddingKernel = chunkedKernel((call, ctx) => {
  const ids = requireInput(call, 0, "ids");
  const w = requireInput(call, 1, "weight");
  const [nv, ne] = w.shape as [number, number];
  const bad = findBadIndex(call, "ids", hostElements(ctx, ids), ids.shape, nv, "token id");
  if (bad !== undefined) throw bad;
  const out = ctx.output(call, [...ids.shape, ne]);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    const [ws0, ws1] = w.strides as [number, number];
    // The descriptor slot is shared: written again for each chunk (another kernel may run in between).
    const part = (k0: number, k1: number) =>
      ctx.exports.embedding(
        writeIntFields(ctx, ctx.params, LOOKUP_FIELDS, [ids.address, ctx.desc(ids), nv, ne]),
        w.address,
        ws0,
        ws1,
        out.address,
        k0,
        k1,
      );
    return overRows(call, ctx, ids.size, ne * EMBEDDING_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: a row copy (measured ≈ 3, Node 20). */
const EMBEDDING_WORK = 3;

/** LookupParams' fields in the module's order (assembly/embedding.ts; 4 bytes each, integers): embedding's and embeddingGrad's ids. */
export const LOOKUP_FIELDS = ["ids", "idesc", "nv", "ne"] as const;
