// The walk score and weighted-sum make, written once: per batch and query head, a product of that head's rows of a
// left operand [B, H, L, K] (q, or the weights) with its shared right head (k or v, ⌊h / (H / Hkv)⌋) into the rows of
// a new [B, H, L, N]. The left rows are read in place unless their last axis is strided (then copied dense once).
// Rows of [B · H · L] are independent, so with a signal a big call runs in chunks of query rows (chunks.ts).
import { withCleanup } from "@attngraph/graph";
import { headRows, overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, type Call } from "./adapter.js";
import type { Operand } from "./matmul.js";

/** One head's rows of a call: where they sit, and the output rows they go to. */
export interface HeadProduct {
  /** The batch and the right operand's head. */
  readonly b: number;
  readonly rightHead: number;
  /** How many rows (of L), and those rows of the left operand [rows, K]. */
  readonly rows: number;
  readonly a: Operand;
  /** Address of the output rows [rows, N] (dense, N apart). */
  readonly c: number;
}

/**
 * Runs `product` for every head's rows of `left0` ([B, H, L, K], named `leftName` in a copy's label) against `right`
 * ([B, Hkv, …]) into a new [B, H, L, n]; the work per output element is K multiply-adds.
 */
export function headProducts(
  call: Call,
  ctx: WasmContext,
  left0: WasmValue,
  leftName: string,
  right: WasmValue,
  n: number,
  product: (head: HeadProduct) => void,
): WasmValue | Promise<WasmValue> {
  const [nb, nh, nl, nk] = left0.shape as [number, number, number, number];
  const out = ctx.output(call, [nb, nh, nl, n]);
  return fillingChunked(call, ctx, out, () => {
    const copied =
      left0.strides[3] === 1 || nk <= 1
        ? undefined
        : ctx.dense(left0, `${call.node} (dense copy of ${leftName})`).value;
    const left = copied ?? left0;
    const group = nh / Math.max(1, right.shape[1]!);
    const [ls0, ls1, ls2] = left.strides as [number, number, number, number];
    const part = (r0: number, r1: number) =>
      headRows(r0, r1, nl, (bh, i0, i1) => {
        const b = Math.floor(bh / nh);
        const h = bh - b * nh;
        const a = { address: left.address + (b * ls0 + h * ls1 + i0 * ls2) * 4, rowStride: ls2, colStride: 1 }; // [L, K]
        product({ b, rightHead: Math.floor(h / group), rows: i1 - i0, a, c: out.address + (bh * nl + i0) * n * 4 });
      });
    return withCleanup(
      () => overRows(call, ctx, nb * nh * nl, n * nk, part),
      () => copied && ctx.release(copied),
    );
  });
}
