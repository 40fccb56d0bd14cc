// add and mul: elementwise sum and product with broadcasting — residual connections (x + attention), positional
// embeddings added over the batch (pos_embed [1, T, E]), the gate of a SiLU-gated MLP (silu(gate) · up). One strided
// loop over the broadcast rows serves both; only the operator differs.
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput } from "./adapter.js";
import { broadcastView } from "./broadcast-view.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

export type BroadcastOp = "add" | "mul";

/**
 * a + b (or a · b) over the broadcast shape `shape`: each input is read through strides that are 0 on the axes it
 * stretches, so nothing is materialised. Computed in float64 and stored in float32: a sum or product of two float32s
 * is exact there and rounds once, as float32 arithmetic (PyTorch's) does.
 * @param a, b any strides, broadcastable to `shape`
 * @param out where to write `shape` row-major; default: a new array
 * @param part the rows (a row = the last axis of `shape`) to write; default: all
 */
export function broadcastImpl(
  op: BroadcastOp,
  a: StridedView,
  b: StridedView,
  shape: readonly number[],
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [ra, rb], [sa, sb], [ad, bd]] = planRows(part, broadcastView(a, shape), broadcastView(b, shape));
  const y = out ?? new Float32Array(sizeOf(shape));
  // The operator is chosen once per call, outside the loops: each loop stays monomorphic for the JIT.
  for (let r = 0; r < ra.length; r++) {
    const o = (r0 + r) * n;
    if (op === "add") for (let j = 0, p = ra[r]!, q = rb[r]!; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! + bd[q]!;
    else for (let j = 0, p = ra[r]!, q = rb[r]!; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! * bd[q]!;
  }
  return y;
}

/** The kernel of `op`. Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export function broadcastKernel(op: BroadcastOp) {
  return chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const a = requireInput(call, 0, "a");
    const b = requireInput(call, 1, "b");
    const shape = call.outShape; // the broadcast shape of a and b: the op's shape rule, which checkCall held it to
    return writeRows(call, chunkWork, shape, BROADCAST_WORK, (y, part) => broadcastImpl(op, a, b, shape, y, part));
  });
}

/** Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export const addKernel = broadcastKernel("add");

/** Work per element in multiply-adds of the matmul core: two strided reads and a write (estimated ≈ 3). */
const BROADCAST_WORK = 3;
