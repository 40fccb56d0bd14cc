// sgd-momentum: SGD's momentum buffer (torch.optim.SGD), elementwise in float64 and stored as float32: with
// d = grad + weightDecay · param, d at the first step (t = 1, PyTorch clones d into the buffer) and
// momentum · buf + (1 − dampening) · d after. The step t is an input (one float, read here), so the graph stays the
// same from step to step.
import { checkOptimizerStepValue, type SgdMomentumAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { momentInputs } from "./moment-inputs.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * The new buffer elementwise in float64, stored as float32: d (t = 1) or momentum · buf + (1 − dampening) · d.
 * @param buf [...], any strides; not read at t = 1
 * @param grad [...] (buf's shape), any strides
 * @param param [...] (buf's shape), any strides; undefined counts as 0 (present, it is read even with weightDecay 0,
 *   as the formula reads it: 0 · ±∞ is NaN)
 * @param t the step, an integer >= 1 (checked by the caller)
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function sgdMomentumImpl(
  buf: StridedView,
  grad: StridedView,
  param: StridedView | undefined,
  t: number,
  a: SgdMomentumAttrs,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  // The buffer is not read at t = 1 (PyTorch clones d into it), so it is not planned then.
  const [r0, n, [gRows, pRows, bRows], [gs, ps, bs], [gd, pd, bd]] = planRows(
    part,
    grad,
    param,
    t === 1 ? undefined : buf,
  );
  const { momentum: mu, weightDecay: wd } = a;
  const keep = 1 - a.dampening;
  const y = out ?? new Float32Array(sizeOf(buf.shape));
  for (let r = 0; r < gRows.length; r++) {
    const o = (r0 + r) * n;
    let q = gRows[r]!;
    let w = pRows ? pRows[r]! : 0;
    if (!bRows || !bd) {
      for (let j = 0; j < n; j++, q += gs, w += ps) y[o + j] = pd ? gd[q]! + wd * pd[w]! : gd[q]!;
    } else {
      for (let j = 0, p = bRows[r]!; j < n; j++, p += bs, q += gs, w += ps) {
        const d = pd ? gd[q]! + wd * pd[w]! : gd[q]!;
        y[o + j] = mu * bd[p]! + keep * d;
      }
    }
  }
  return y;
}

/**
 * Inputs: buf [...], grad [...], optional param [...] (needed when weightDecay > 0), step [] or [1] (t, 1 for the
 * first step); attrs { momentum, dampening, weightDecay } → buf's shape.
 */
export const sgdMomentumKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [buf, grad, param] = momentInputs(call, "buf");
  const a = attrsOf<SgdMomentumAttrs>(call);
  const step = requireInput(call, 3, "step");
  const t = checkOptimizerStepValue(call, step.data[step.offset] ?? NaN);
  return writeRows(call, chunkWork, buf.shape, SGD_MOMENTUM_WORK, (y, part) =>
    sgdMomentumImpl(buf, grad, param, t, a, y, part),
  );
});

/** Work per element in multiply-adds of the matmul core: three strided reads and three multiply-adds (≈ 3). */
const SGD_MOMENTUM_WORK = 3;
