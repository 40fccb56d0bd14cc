// embedding-grad: the table gradient of an embedding, a scatter-add of grad rows into a zeroed [V, E] by int32 id, in
// position order (repeated ids accumulate), in the module (assembly/embedding-grad.ts). Every id is checked on the host
// first with the forward kernel's check and error (findBadIndex: an "input" error naming the node, the position and
// the id), before the output is even allocated, so a bad id never reaches the module. ids and grad may be any views.
// With a signal, a big call runs in chunks of positions.
import { findBadIndex, type EmbeddingGradAttrs } from "@attngraph/graph";
import { LOOKUP_FIELDS } from "./embedding.js";
import { writeIntFields } from "./params-block.js";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, fillingChunked, requireInput } from "./adapter.js";
import { hostElements } from "./host-read.js";

/** Inputs: ids [...] int32, grad [..., E]; attrs { rows: V } → [V, E]. */
export const embeddingGradKernel = chunkedKernel((call, ctx) => {
  const ids = requireInput(call, 0, "ids");
  const g = requireInput(call, 1, "grad");
  const nv = attrsOf<EmbeddingGradAttrs>(call).rows;
  const ne = g.shape[g.rank - 1]!;
  const bad = findBadIndex(call, "ids", hostElements(ctx, ids), ids.shape, nv, "token id");
  if (bad !== undefined) throw bad;
  const out = ctx.output(call, [nv, ne]);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    ctx.exports.zero(out.address, out.size * 4);
    // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
    const part = (k0: number, k1: number) =>
      ctx.exports.embeddingGrad(
        writeIntFields(ctx, ctx.params, LOOKUP_FIELDS, [ids.address, ctx.desc(ids, 0), nv, ne]),
        g.address,
        ctx.desc(g, 1),
        out.address,
        k0,
        k1,
      );
    return ids.size === 0 ? undefined : overRows(call, ctx, ids.size, ne * EMBEDDING_GRAD_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: a row add. */
const EMBEDDING_GRAD_WORK = 3;
