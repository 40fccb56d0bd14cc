// embedding-grad: the table gradient of an embedding, a scatter-add of grad rows by int32 id. Every id is checked
// before anything is written, with the forward kernel's error: an id outside the table is the caller's bug.
import { afterwards, chunkSignal, findBadIndex, runSteps, type EmbeddingGradAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { intInput, outData, requireInput, result, attrsOf } from "./adapter.js";
import { ensure64 } from "./matmul.js";
import { lastAxis, rowOffsets, type StridedView } from "./strided.js";

let rowScratch: Float64Array = new Float64Array(0); // one table row's sums; reused, held only within one step

/**
 * The positions in order of id, positions of one id in increasing order: then each table row's sum is made in one
 * float64 accumulator of E values (not a float64 copy of the whole [V, E] table), adding grad rows in position order,
 * exactly as a plain `out[ids[p]] += grad[p]` loop over p in float64 would.
 */
export function positionsById(ids: Int32Array): Uint32Array {
  return Uint32Array.from({ length: ids.length }, (_, p) => p).sort((a, b) => ids[a]! - ids[b]! || a - b);
}

/**
 * Writes rows of `out` [V, E] (already zero) for the ids of `order` from index `from`, one whole id at a time, and
 * yields the work of each id (its positions · E); ids must already be checked to lie in [0, V).
 * @param grad [..., E], any strides; its rows are the positions of `ids`
 */
export function* embeddingGradSteps(
  ids: Int32Array,
  order: Uint32Array,
  grad: StridedView,
  out: Float32Array,
): Generator<number, void, void> {
  const rows = rowOffsets(grad);
  const { length: e, stride: gs } = lastAxis(grad);
  const gd = grad.data;
  for (let k = 0; k < order.length; ) {
    const id = ids[order[k]!]!;
    const acc = (rowScratch = ensure64(rowScratch, e));
    acc.fill(0, 0, e);
    const k0 = k;
    for (; k < order.length && ids[order[k]!] === id; k++) {
      for (let j = 0, p = rows[order[k]!]!; j < e; j++, p += gs) acc[j] = acc[j]! + gd[p]!;
    }
    for (let j = 0; j < e; j++) out[id * e + j] = acc[j]!;
    yield (k - k0) * e;
  }
}

/** Inputs: ids [...] int32, grad [..., E]; attrs { rows: V } → [V, E], rows no id names 0. */
export const embeddingGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const ids = intInput(call, 0, "ids");
  const grad = requireInput(call, 1, "grad");
  const v = attrsOf<EmbeddingGradAttrs>(call).rows;
  const flat = ids.toInt32Array();
  const bad = findBadIndex(call, "ids", flat, ids.shape, v, "token id");
  if (bad) throw bad;
  const e = grad.shape[grad.rank - 1]!;
  const shape = [v, e];
  const out = outData(call, shape) ?? new Float32Array(v * e);
  out.fill(0); // a planned `out` holds garbage, and rows no id names stay 0
  const work = flat.length * e;
  const pending = runSteps(
    embeddingGradSteps(flat, positionsById(flat), grad, out),
    chunkSignal(call, work, chunkWork),
    chunkWork,
    call.node,
  );
  return afterwards(pending, () => result(call, out, shape));
});
