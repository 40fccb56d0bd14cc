// sgd-step: SGD's parameter update (torch.optim.SGD, maximize false), elementwise in float64 and stored as float32:
// with d = grad + weightDecay · param, param − lr · u where u = d without momentum, buf (the buffer after this step's
// sgd-momentum) with it, and d + momentum · buf with `nesterov`.
import { checkLrScaleValue, type SgdStepAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, requireInput, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * The update elementwise in float64, stored as float32.
 * @param param [...], any strides
 * @param grad [...] (param's shape), any strides
 * @param buf [...] (param's shape), the momentum buffer after this step; any strides; read only with momentum > 0
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function sgdStepImpl(
  param: StridedView,
  grad: StridedView,
  buf: StridedView | undefined,
  a: SgdStepAttrs,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [pRows, gRows, bRows], [ps, gs, bs], [pd, gd, bd]] = planRows(
    part,
    param,
    grad,
    a.momentum > 0 ? buf : undefined,
  );
  const { lr, momentum: mu, nesterov, weightDecay: wd } = a;
  const y = out ?? new Float32Array(sizeOf(param.shape));
  for (let r = 0; r < pRows.length; r++) {
    const o = (r0 + r) * n;
    let p = pRows[r]!;
    let q = gRows[r]!;
    if (!bRows || !bd) {
      for (let j = 0; j < n; j++, p += ps, q += gs) {
        const pv = pd[p]!;
        y[o + j] = pv - lr * (gd[q]! + wd * pv);
      }
    } else if (nesterov) {
      for (let j = 0, b = bRows[r]!; j < n; j++, p += ps, q += gs, b += bs) {
        const pv = pd[p]!;
        y[o + j] = pv - lr * (gd[q]! + wd * pv + mu * bd[b]!);
      }
    } else {
      for (let j = 0, b = bRows[r]!; j < n; j++, p += ps, b += bs) y[o + j] = pd[p]! - lr * bd[b]!;
    }
  }
  return y;
}

/**
 * Inputs: param [...], grad [...], optional buf [...] (needed when momentum > 0), optional lrScale [] or [1] (this
 * step's factor on lr); attrs { lr, momentum, nesterov,
 * weightDecay } → param's shape.
 */
export const sgdStepKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const param = requireInput(call, 0, "param");
  const grad = requireInput(call, 1, "grad");
  const attrs = attrsOf<SgdStepAttrs>(call);
  const buf = optionalInput(call, 2, "buf"); // present with momentum: the shape rule asks for it
  const lrScale = optionalInput(call, 3, "lrScale");
  const a = lrScale ? { ...attrs, lr: attrs.lr * checkLrScaleValue(call, lrScale.data[lrScale.offset] ?? NaN) } : attrs;
  return writeRows(call, chunkWork, param.shape, SGD_STEP_WORK, (y, part) => sgdStepImpl(param, grad, buf, a, y, part));
});

/** Work per element in multiply-adds of the matmul core: three strided reads and three multiply-adds (≈ 3). */
const SGD_STEP_WORK = 3;
