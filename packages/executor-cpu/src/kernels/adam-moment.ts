// adam-moment: one of Adam's moments (torch.optim.Adam), elementwise in float64 and stored as float32: with
// g = grad + weightDecay · param, beta · state + (1 − beta) · g (the first moment) or · g² (the second, `square`).
import type { AdamMomentAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { attrsOf } from "./adapter.js";
import { momentInputs } from "./moment-inputs.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * beta · state + (1 − beta) · g (or g²), g = grad + weightDecay · param, elementwise in float64, stored as float32.
 * @param state [...], any strides
 * @param grad [...] (state's shape), any strides
 * @param param [...] (state's shape), any strides; undefined counts as 0 (present, it is read even with weightDecay 0,
 *   as the formula reads it: 0 · ±∞ is NaN)
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function adamMomentImpl(
  state: StridedView,
  grad: StridedView,
  param: StridedView | undefined,
  a: AdamMomentAttrs,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [sRows, gRows, pRows], [ss, gs, ps], [sd, gd, pd]] = planRows(part, state, grad, param);
  const { beta, square, weightDecay: wd } = a;
  const keep = 1 - beta;
  const y = out ?? new Float32Array(sizeOf(state.shape));
  for (let r = 0; r < sRows.length; r++) {
    const o = (r0 + r) * n;
    let p = sRows[r]!;
    let q = gRows[r]!;
    if (pd && pRows) {
      for (let j = 0, w = pRows[r]!; j < n; j++, p += ss, q += gs, w += ps) {
        const g = gd[q]! + wd * pd[w]!;
        y[o + j] = beta * sd[p]! + keep * (square ? g * g : g);
      }
    } else {
      for (let j = 0; j < n; j++, p += ss, q += gs) {
        const g = gd[q]!;
        y[o + j] = beta * sd[p]! + keep * (square ? g * g : g);
      }
    }
  }
  return y;
}

/**
 * Inputs: state [...], grad [...], optional param [...] (needed when weightDecay > 0); attrs { beta, square,
 * weightDecay } → state's shape.
 */
export const adamMomentKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [state, grad, param] = momentInputs(call, "state");
  const a = attrsOf<AdamMomentAttrs>(call);
  return writeRows(call, chunkWork, state.shape, ADAM_MOMENT_WORK, (y, part) =>
    adamMomentImpl(state, grad, param, a, y, part),
  );
});

/** Work per element in multiply-adds of the matmul core: three strided reads and four multiply-adds (≈ 4). */
const ADAM_MOMENT_WORK = 4;
