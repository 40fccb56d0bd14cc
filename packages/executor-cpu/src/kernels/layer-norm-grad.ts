// layer-norm-grad: layer norm's input gradient. The row statistics are recomputed from x (two passes, as the forward
// kernel computes them) instead of being saved by the forward pass: cheaper in memory, and the same numbers.
import {
  afterwards,
  checkLayerNormEps,
  expectAxis,
  expectNormParams,
  expectSameShape,
  overRows,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/** Mean and 1/sqrt(biased var + eps) of one row of n values at data[base + j·stride], in float64 (as layerNormImpl). */
export function rowStats(
  data: Float32Array,
  base: number,
  n: number,
  stride: number,
  eps: number,
): { readonly mean: number; readonly rstd: number } {
  let sum = 0;
  for (let j = 0, p = base; j < n; j++, p += stride) sum += data[p]!;
  const mean = sum / n;
  let sq = 0;
  for (let j = 0, p = base; j < n; j++, p += stride) {
    const d = data[p]! - mean;
    sq += d * d;
  }
  return { mean, rstd: 1 / Math.sqrt(sq / n + eps) };
}

/**
 * Per row, with x̂ = (x − μ) · rstd and ĝ = grad ⊙ weight (weight absent = 1):
 * dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), in float64, stored as float32.
 * @param grad [..., E], any strides
 * @param x [..., E], any strides
 * @param weight [E] or undefined, any stride
 * @param out where to write [..., E] row-major; default: a new array
 * @param part the rows to write; default: all
 */
export function layerNormGradImpl(
  grad: StridedView,
  x: StridedView,
  weight: StridedView | undefined,
  eps: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const r0 = part?.start ?? 0;
  const xRows = rowOffsets(x, r0, part?.end);
  const gRows = rowOffsets(grad, r0, part?.end);
  const { length: n, stride: xs } = lastAxis(x);
  const { stride: gs } = lastAxis(grad);
  const xd = x.data;
  const gd = grad.data;
  const wd = weight?.data;
  const ws = weight?.strides[0] ?? 0;
  const wo = weight?.offset ?? 0;
  const dx = out ?? new Float32Array(rowCount(x.shape) * n);
  for (let r = 0; r < xRows.length; r++) {
    const { mean, rstd } = rowStats(xd, xRows[r]!, n, xs, eps);
    // mean(ĝ) and mean(ĝ ⊙ x̂) over the row.
    let sg = 0;
    let sgx = 0;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs) {
      const gh = wd === undefined ? gd[q]! : gd[q]! * wd[wo + j * ws]!;
      sg += gh;
      sgx += gh * (xd[p]! - mean) * rstd;
    }
    const mg = sg / n;
    const mgx = sgx / n;
    const o = (r0 + r) * n;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs) {
      const gh = wd === undefined ? gd[q]! : gd[q]! * wd[wo + j * ws]!;
      dx[o + j] = rstd * (gh - mg - (xd[p]! - mean) * rstd * mgx);
    }
  }
  return dx;
}

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const layerNormGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const weight = optionalInput(call, 2, "weight");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  const { length: n } = lastAxis(x);
  expectNormParams(call, n, weight, undefined);
  const rows = rowCount(x.shape);
  const dx = outData(call, x.shape) ?? new Float32Array(rows * n);
  const pending = overRows(call, chunkWork, rows, n * LAYER_NORM_GRAD_WORK, (start, end) =>
    layerNormGradImpl(grad, x, weight, eps, dx, { start, end }),
  );
  return afterwards(pending, () => result(call, dx, x.shape));
});

/** Work per element in multiply-adds of the matmul core: four passes over the row (estimated ≈ 12). */
const LAYER_NORM_GRAD_WORK = 12;
