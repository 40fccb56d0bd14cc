// Block sparsity of a mask modification for the module's fused attention: the host classifies each key block of each
// query block the way attentionBlock walks them (from the block's first visible key rounded down to 8, in blocks of
// BK) with @attngraph/graph's interval arithmetic (BlockClasses), and hands the module one byte per block: 0 = the mask
// hides it from every row (skipped), 2 = it keeps every pair (the mask is not evaluated there), 1 = per pair. A document
// mask or a sliding window as a mask modification then costs in proportion to the keys kept, and a causal mask written
// as an expression costs what the built-in one does off the diagonal. Rows are per batch and head only when the
// expression reads b or h.
import {
  BlockClasses,
  BLOCK_SOME,
  checkExprCached,
  maskOffset,
  windowOf,
  type AttentionAttrs,
  type AttentionMods,
} from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import type { Call } from "./adapter.js";
import type { CallMods } from "./attention-mods.js";
import { views } from "./score-mod.js";

/** Query rows and keys per block: attentionBlock's. */
const BQ = 64;
const BK = 64;

export interface BlockClassTable {
  readonly value: WasmValue;
  readonly fields: {
    readonly classes: number;
    readonly clsQB: number;
    readonly clsBlk: number;
    readonly clsH: number;
    readonly clsByB: number;
  };
}

/** The call's table in module memory (release `value` after the call), or undefined when no block is hidden or kept whole. */
export function blockClassTable(
  ctx: WasmContext,
  call: Call,
  mods: CallMods,
  q: readonly number[],
  ns: number,
  attrs: AttentionAttrs,
): BlockClassTable | undefined {
  const raw = (call.attrs as AttentionMods).maskMod ?? null;
  if (raw === null) return undefined;
  const keep = checkExprCached(raw, {
    subject: `${call.node}.maskMod`,
    role: "mask",
    inputs: new Map([...mods.gathered].map(([n, v]) => [n, v.rank])),
  });
  const [nb, nh, nl] = q as [number, number, number];
  const classes = new BlockClasses(keep, views(ctx, mods.gathered));
  const byB = classes.readsB;
  const byH = classes.readsH;
  const off = maskOffset(attrs.alignment, nl, ns);
  const win = windowOf(attrs);
  const nQB = Math.ceil(nl / BQ);
  const nBlk = Math.ceil(ns / BK) + 1; // the first block starts up to 7 keys early
  const rows = (byB ? nb : 1) * (byH ? nh : 1);
  const table = new Uint8Array(rows * nQB * nBlk).fill(1);
  let whole = 0;
  for (let b = 0; b < (byB ? nb : 1); b++) {
    for (let h = 0; h < (byH ? nh : 1); h++) {
      for (let qb = 0; qb < nQB; qb++) {
        const i0 = qb * BQ;
        const br = Math.min(BQ, nl - i0);
        const first = Math.max(0, win > 0 ? i0 + off - win + 1 : 0) & ~7;
        const end = Math.min(ns, attrs.causal ? i0 + br - 1 + off + 1 : ns);
        const row = ((b * (byH ? nh : 1) + h) * nQB + qb) * nBlk;
        for (let blk = 0; first + blk * BK < end; blk++) {
          const s0 = first + blk * BK;
          const c = classes.of(b, h, i0, i0 + br, s0, Math.min(end, s0 + BK));
          table[row + blk] = c;
          if (c !== BLOCK_SOME) whole++;
        }
      }
    }
  }
  if (whole === 0) return undefined;
  // Allocated after the classes are found: an allocation may grow the memory and detach the views they read.
  const value = ctx.alloc([Math.ceil(table.length / 4)], `${call.node} (block classes)`);
  new Uint8Array(ctx.f32().buffer, value.address, table.length).set(table);
  return {
    value,
    fields: { classes: value.address, clsQB: nQB, clsBlk: nBlk, clsH: byH ? nh : 1, clsByB: byB ? 1 : 0 },
  };
}
