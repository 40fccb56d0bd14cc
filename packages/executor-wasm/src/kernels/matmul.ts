// The host side of the module's register-tiled matmul: operands as (address, strides) and one shared scratch block.
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { leadingStride } from "@attngraph/tensor";
// Shared by every executor (@attngraph/tensor), re-exported where this package's matrix kernels always found it.
export { leadingStride };
import { MATMUL_PARAMS_BYTES, writeMatmulParams } from "./matmul-params.js";

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
  const biasAt = { bias: bias?.address ?? 0, biasStride: bias?.stride ?? 0 };
  /** Call i's scratch of `bytes` with its params block before it (MATMUL_PARAMS_BYTES). */
  const callScratch = (i: number, bytes: number) => ctx.callScratch(i, MATMUL_PARAMS_BYTES + bytes, subject);
  if (packed !== undefined && ctx.threads > 1 && m < ctx.exports.matvecRows()) {
    // A decoding step's projection: too few rows to split, so each thread streams its own columns of the weight (a
    // matrix–vector product costs per byte of weight read, hence the work counted in bytes).
    const cols = columnParts(ctx.maxCalls, n, 4 * m * n * k, ctx.parallelWork);
    if (cols.length > 1) {
      const blocks = cols.map((_, i) => callScratch(i, ctx.exports.matmulPackedScratchBytes(n)));
      ctx.parallel(
        cols.map(([j0, j1], i) => {
          const p = blocks[i]!;
          const at = { m, n, k, a: a.address, lda: a.rowStride, b: packed, c, ldc, ...biasAt };
          return {
            name: "matvecPackedColumns",
            args: [writeMatmulParams(ctx, p, { ...at, scratch: p + MATMUL_PARAMS_BYTES, j0, j1 })],
          };
        }),
      );
      return;
    }
  }
  const scratchBytes =
    packed !== undefined ? ctx.exports.matmulPackedScratchBytes(n) : ctx.exports.matmulScratchBytes(n, k);
  const parts = ctx.threads > 1 ? rowParts(ctx.threads, ctx.maxCalls, m, n, k, ctx.parallelWork) : [];
  if (parts.length > 1) {
    // Threads: each call takes whole rows of C (multiples of the tile's 5 rows) with its own scratch and params; every
    // element is summed exactly as one call over all rows sums it, so the numbers do not depend on the thread count.
    const blocks = parts.map((_, i) => callScratch(i, scratchBytes));
    ctx.parallel(
      parts.map(([r0, r1], i) => {
        const p = blocks[i]!;
        const rows = {
          m: r1 - r0,
          n,
          k,
          a: a.address + r0 * a.rowStride * 4,
          lda: a.rowStride,
          c: c + r0 * ldc * 4,
          ldc,
        };
        const call =
          packed !== undefined ? { ...rows, b: packed } : { ...rows, b: b.address, brs: b.rowStride, bcs: b.colStride };
        return {
          name: packed !== undefined ? "matmulPacked" : "matmul",
          args: [writeMatmulParams(ctx, p, { ...call, ...biasAt, scratch: p + MATMUL_PARAMS_BYTES })],
        };
      }),
    );
    return;
  }
  const p = callScratch(0, scratchBytes);
  const whole = { m, n, k, a: a.address, lda: a.rowStride, c, ldc, ...biasAt, scratch: p + MATMUL_PARAMS_BYTES };
  if (packed !== undefined) ctx.exports.matmulPacked(writeMatmulParams(ctx, p, { ...whole, b: packed }));
  else ctx.exports.matmul(writeMatmulParams(ctx, p, { ...whole, b: b.address, brs: b.rowStride, bcs: b.colStride }));
}

/** Rows of the module's register tile: a thread's share of C is a multiple of it. */
const TILE_ROWS = 5;
/**
 * Fewest rows of C per parallel call: every call streams all of B (and packs it, when B is not a packed weight), so
 * smaller shares cost more B traffic than the balance they buy.
 */
const MIN_CALL_ROWS = 40;

/**
 * Row ranges [r0, r1) of C, at most `maxCalls` of them and at least MIN_CALL_ROWS rows each (one tile's rows when
 * `minWork` is 0: split whatever can be), multiples of the tile; one range when the call is smaller than `minWork`
 * multiply-adds. More calls than `threads` come in whole rounds (a multiple of `threads`), so that every thread gets as
 * many rows: 128 rows on 2 threads in 3 calls of 45, 45 and 38 left one thread 83 rows and capped the speed-up at 1.5.
 */
export function rowParts(
  threads: number,
  maxCalls: number,
  m: number,
  n: number,
  k: number,
  minWork: number,
): [number, number][] {
  let parts = Math.min(maxCalls, Math.floor(m / (minWork === 0 ? TILE_ROWS : MIN_CALL_ROWS)));
  if (parts > threads) parts -= parts % threads;
  if (parts <= 1 || m * n * k < minWork) return [[0, m]];
  const rows = Math.ceil(m / parts / TILE_ROWS) * TILE_ROWS;
  const out: [number, number][] = [];
  for (let r0 = 0; r0 < m; r0 += rows) out.push([r0, Math.min(m, r0 + rows)]);
  return out;
}

/** Columns of one matrix–vector pass (assembly/matmul.ts matvecPacked): a thread's share is a multiple of it. */
const MATVEC_COLUMNS = 24;

/** Column ranges [j0, j1), at most `maxCalls`, on whole passes; one range when `work` is below `minWork`. */
export function columnParts(maxCalls: number, n: number, work: number, minWork: number): [number, number][] {
  const parts = Math.min(maxCalls, Math.ceil(n / MATVEC_COLUMNS));
  if (parts <= 1 || work < minWork) return [[0, n]];
  const cols = Math.ceil(n / parts / MATVEC_COLUMNS) * MATVEC_COLUMNS;
  const out: [number, number][] = [];
  for (let j0 = 0; j0 < n; j0 += cols) out.push([j0, Math.min(n, j0 + cols)]);
  return out;
}

/**
 * x [..., K] as the A operand of a matmul: its rows when the leading axes collapse into one row stride and the last
 * axis has unit stride; else a dense copy (`temp`, which the caller releases).
 */
export function rowsOperand(
  ctx: WasmContext,
  x: WasmValue,
  subject: string,
): { readonly a: Operand; readonly temp: WasmValue | undefined } {
  const r = x.rank;
  const colStride = r === 0 ? 1 : x.strides[r - 1]!;
  const rs = leadingStride(x);
  const k = r === 0 ? 1 : x.shape[r - 1]!;
  if ((colStride === 1 || k <= 1) && rs !== undefined)
    return { a: { address: x.address, rowStride: rs, colStride: 1 }, temp: undefined };
  const { value } = ctx.dense(x, `${subject} (dense copy of a strided operand)`);
  return { a: { address: value.address, rowStride: k, colStride: 1 }, temp: value };
}
