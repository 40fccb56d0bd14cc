// projection: y = x · Wᵀ + b over the last axis (nn.Linear layout). out-proj reuses this file's Impl and adapter.
// With a signal, a big call works in chunks of rows (chunks.ts); each chunk is the same Impl over its rows.
import { afterwards, overRows } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result, type Call } from "./adapter.js";
import { matmul, type MatOperand } from "./matmul.js";
import { lastAxis, leadingStride, rowCount, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/**
 * y = x · Wᵀ + b through the blocked matmul core: float64 accumulation in k order, the bias added last, stored as
 * float32 (the same numbers as a plain dot-product loop). Reads every input through its strides, so a transposed or
 * sliced x (e.g. one third of a fused QKV projection) or a transposed weight needs no copy; only an x whose leading
 * axes do not collapse into one row stride is gathered first. Shapes are not checked here (the op's shape rule is, before dispatch).
 * Rows are independent: computing `rows` [start, end) alone writes exactly what the whole call writes there.
 * @param x [..., In], any strides
 * @param weight [Out, In], any strides
 * @param bias [Out], or undefined
 * @param out where to write [..., Out] row-major (rows · Out elements); default: a new array
 * @param rows the rows of x (leading axes flattened) to compute; default: all
 * @returns [..., Out], row-major (`out` when given)
 */
export function projectionImpl(
  x: StridedView,
  weight: StridedView,
  bias: StridedView | undefined,
  out?: Float32Array,
  rows?: RowRange,
): Float32Array {
  const { length: nIn, stride: xs } = lastAxis(x);
  const all = rowCount(x.shape);
  const nOut = weight.shape[0]!;
  const y = out ?? new Float32Array(all * nOut);
  const r0 = rows?.start ?? 0;
  const r1 = rows?.end ?? all;
  const a = rowsOperand(x, r0, r1, nIn, xs);
  // W is [Out, In]; the product needs Wᵀ [In, Out], which is W with its strides swapped.
  const w: MatOperand = {
    data: weight.data,
    offset: weight.offset,
    rowStride: weight.strides[1]!,
    colStride: weight.strides[0]!,
  };
  const b = bias === undefined ? undefined : { data: bias.data, offset: bias.offset, stride: bias.strides[0]! };
  matmul(r1 - r0, nOut, nIn, a, w, y, r0 * nOut, nOut, b);
  return y;
}

/**
 * Rows [r0, r1) of x [..., In] as a [r1 − r0, In] operand: a view when the leading axes collapse, else a dense copy
 * of those rows. (Also linear-weight-grad's.)
 */
export function rowsOperand(x: StridedView, r0: number, r1: number, nIn: number, xs: number): MatOperand {
  const rs = leadingStride(x);
  if (rs !== undefined) return { data: x.data, offset: x.offset + r0 * rs, rowStride: rs, colStride: xs };
  const starts = rowOffsets(x, r0, r1);
  const dense = new Float32Array((r1 - r0) * nIn);
  for (let r = 0, o = 0; r < starts.length; r++)
    for (let i = 0, p = starts[r]!; i < nIn; i++, p += xs) dense[o++] = x.data[p]!;
  return { data: dense, offset: 0, rowStride: nIn, colStride: 1 };
}

/**
 * The inputs of a call that projects (projection, out-proj, linear-gelu): x [..., In], weight [Out, In], optional bias
 * [Out] (shapes as the shared linearShape rule guarantees); with In, Out and the output shape.
 */
export function projectionInputs(call: Call) {
  const x = requireInput(call, 0, "x");
  const w = requireInput(call, 1, "weight");
  const b = optionalInput(call, 2, "bias");
  const nIn = x.shape[x.rank - 1]!;
  const nOut = w.shape[0]!;
  return { x, w, b, nIn, nOut, shape: [...x.shape.slice(0, -1), nOut] };
}

/** Inputs: x [..., In], weight [Out, In], optional bias [Out] → [..., Out]. Also serves out-proj. */
export const projectionKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const { x, w, b, nIn, nOut, shape } = projectionInputs(call);
  const rows = rowCount(x.shape);
  const y = outData(call, shape) ?? new Float32Array(rows * nOut);
  const pending = overRows(call, chunkWork, rows, nIn * nOut, (start, end) =>
    projectionImpl(x, w, b, y, { start, end }),
  );
  return afterwards(pending, () => result(call, y, shape));
});
