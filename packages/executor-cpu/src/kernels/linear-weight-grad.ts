// linear-weight-grad: dW = gradᵀ · x, the weight gradient of every projection. The hot backward op, so it goes through
// the blocked matmul core, reading both operands through their strides (gradᵀ is grad with its strides swapped).
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result } from "./adapter.js";
import { matmul, type MatOperand } from "./matmul.js";
import { rowsOperand } from "./projection.js";
import { lastAxis, rowCount, type RowRange, type StridedView } from "./strided.js";

/**
 * The two operands of dW = gradᵀ · x over all rows r (leading axes flattened): gradᵀ [Out, rows] and x [rows, In].
 * Views where the leading axes collapse into one stride, else dense copies, made once per call (not once per chunk).
 */
export function weightGradOperands(
  grad: StridedView,
  x: StridedView,
): { readonly gt: MatOperand; readonly xm: MatOperand } {
  const rows = rowCount(x.shape);
  const g = lastAxis(grad);
  const xl = lastAxis(x);
  const gm = rowsOperand(grad, 0, rows, g.length, g.stride);
  const gt: MatOperand = { data: gm.data, offset: gm.offset, rowStride: gm.colStride, colStride: gm.rowStride };
  return { gt, xm: rowsOperand(x, 0, rows, xl.length, xl.stride) };
}

/**
 * dW[o, i] = Σ_r grad[r, o] · x[r, i] for the weight rows o in `part` (default: all), accumulated in float64 in r order
 * and stored as float32. Weight rows are independent: a part writes exactly what the whole call writes there.
 * @param rows the shared (flattened leading) dim
 * @param out where to write [Out, In] row-major
 */
export function linearWeightGradImpl(
  gt: MatOperand,
  xm: MatOperand,
  nOut: number,
  nIn: number,
  rows: number,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const y = out ?? new Float32Array(nOut * nIn);
  const o0 = part?.start ?? 0;
  const o1 = part?.end ?? nOut;
  const a: MatOperand = { ...gt, offset: gt.offset + o0 * gt.rowStride };
  matmul(o1 - o0, nIn, rows, a, xm, y, o0 * nIn, nIn);
  return y;
}

/**
 * Inputs: grad [..., Out], x [..., In] → [Out, In]. With a signal, a big call works in chunks of weight rows; each
 * chunk repacks x (the matmul core packs its right operand per call), a cost of about 1/(rows per chunk) of the work.
 */
export const linearWeightGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const nOut = grad.shape[grad.rank - 1]!;
  const nIn = x.shape[x.rank - 1]!;
  const rows = rowCount(x.shape);
  const shape = [nOut, nIn];
  const y = outData(call, shape) ?? new Float32Array(nOut * nIn);
  const { gt, xm } = weightGradOperands(grad, x);
  const pending = overRows(call, chunkWork, nOut, rows * nIn, (start, end) =>
    linearWeightGradImpl(gt, xm, nOut, nIn, rows, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, shape));
});
