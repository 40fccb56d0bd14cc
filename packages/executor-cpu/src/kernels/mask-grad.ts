// mask-grad: the backward of mask and ALiBi. Read from the forward output, so every hiding rule (causal, window,
// padding, user mask, −∞ bias) is covered without repeating it: a score shown as −∞ got no gradient.
import type { MaskGradAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * out = masked == −∞ ? 0 : scale · grad, elementwise. Only −∞ hides: a +∞ or NaN in `masked` came from the scores
 * themselves, not from the mask, so its gradient passes (and a NaN in grad stays NaN there).
 * @param grad [...], any strides
 * @param masked [...] (grad's shape), any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function maskGradImpl(
  grad: StridedView,
  masked: StridedView,
  scale: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [gRows, mRows], [gs, ms], [gd, md]] = planRows(part, grad, masked);
  const y = out ?? new Float32Array(sizeOf(grad.shape));
  for (let r = 0; r < gRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = gRows[r]!, q = mRows[r]!; j < n; j++, p += gs, q += ms)
      y[o + j] = md[q] === -Infinity ? 0 : scale * gd[p]!;
  }
  return y;
}

/** Inputs: grad [...], masked [...] (the forward output); attrs { scale } → grad's shape. */
export const maskGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const masked = requireInput(call, 1, "masked");
  const { scale } = attrsOf<MaskGradAttrs>(call);
  return writeRows(call, chunkWork, grad.shape, MASK_GRAD_WORK, (y, part) =>
    maskGradImpl(grad, masked, scale, y, part),
  );
});

/** Work per element in multiply-adds of the matmul core: two strided reads, a compare and a multiply (≈ 3). */
const MASK_GRAD_WORK = 3;
