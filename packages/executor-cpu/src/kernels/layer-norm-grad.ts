// layer-norm-grad: layer norm's input gradient. The row statistics are recomputed from x (two passes, as the forward
// kernel computes them) instead of being saved by the forward pass: cheaper in memory, and the same numbers.
import type { LayerNormGradAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, requireInput, attrsOf } from "./adapter.js";
import { paramVector, rowStats } from "./norm-rows.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

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
  const [r0, n, [xRows, gRows], [xs, gs], [xd, gd]] = planRows(part, x, grad);
  const { data: wd, stride: ws, offset: wo } = paramVector(weight);
  const dx = out ?? new Float32Array(sizeOf(x.shape));
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
  const { eps } = attrsOf<LayerNormGradAttrs>(call);
  return writeRows(call, chunkWork, x.shape, LAYER_NORM_GRAD_WORK, (dx, part) =>
    layerNormGradImpl(grad, x, weight, eps, dx, part),
  );
});

/** Work per element in multiply-adds of the matmul core: four passes over the row (estimated ≈ 12). */
const LAYER_NORM_GRAD_WORK = 12;
