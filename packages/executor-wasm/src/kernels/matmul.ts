// The host side of the module's register-tiled matmul: operands as (address, strides) and one shared scratch block.
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";

/** A [rows, cols] matrix operand: element [r, c] at `address` + (r · rowStride + c · colStride) · 4 bytes. */
export interface Operand {
  readonly address: number;
  readonly rowStride: number;
  readonly colStride: number;
}

/**
 * C[m, n] = A[m, k] · B[k, n] (+ bias) into the dense rows at `c` (`ldc` elements apart). A must have unit column
 * stride (the module reads its rows in place); B any strides (the module packs it); `bias` is [n] with any stride.
 * `packed`: B already packed (`ctx.packedMatmulB`), so it is not packed again here.
 */
export function matmul(
  ctx: WasmContext,
  m: number,
  n: number,
  k: number,
  a: Operand,
  b: Operand,
  c: number,
  ldc: number,
  bias: { readonly address: number; readonly stride: number } | undefined,
  subject: string,
  packed?: number,
): void {
  if (m === 0 || n === 0) return;
  if (packed !== undefined) {
    const scratch = ctx.scratch(ctx.exports.matmulPackedScratchBytes(n), subject);
    ctx.exports.matmulPacked(m, n, k, a.address, a.rowStride, packed, c, ldc, bias?.address ?? 0, bias?.stride ?? 0, scratch);
    return;
  }
  const scratch = ctx.scratch(ctx.exports.matmulScratchBytes(n, k), subject);
  ctx.exports.matmul(m, n, k, a.address, a.rowStride, b.address, b.rowStride, b.colStride, c, ldc, bias?.address ?? 0, bias?.stride ?? 0, scratch);
}

/**
 * x [..., K] as the A operand of a matmul: its rows when the leading axes collapse into one row stride and the last
 * axis has unit stride; else a dense copy (`temp`, which the caller releases).
 */
export function rowsOperand(ctx: WasmContext, x: WasmValue, subject: string): { readonly a: Operand; readonly temp: WasmValue | undefined } {
  const r = x.rank;
  const colStride = r === 0 ? 1 : x.strides[r - 1]!;
  const rs = leadingStride(x);
  const k = r === 0 ? 1 : x.shape[r - 1]!;
  if ((colStride === 1 || k <= 1) && rs !== undefined) return { a: { address: x.address, rowStride: rs, colStride: 1 }, temp: undefined };
  const { value } = ctx.dense(x, `${subject} (dense copy of a strided operand)`);
  return { a: { address: value.address, rowStride: k, colStride: 1 }, temp: value };
}

/** The one stride that walks every row of [..., K] when the leading axes collapse, else undefined. */
export function leadingStride(x: WasmValue): number | undefined {
  let stride: number | undefined;
  let next = 0;
  for (let d = x.rank - 2; d >= 0; d--) {
    const n = x.shape[d]!;
    if (n === 1) continue;
    if (stride === undefined) stride = x.strides[d]!;
    else if (x.strides[d] !== next) return undefined;
    next = x.strides[d]! * n;
  }
  return stride ?? 0;
}
