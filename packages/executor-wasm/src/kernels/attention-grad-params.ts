// The fused attention backward's entry points (assembly/attention-grad.ts) read their numbers from the same params
// area as the forward's, written field by field by name (attention-params.ts's `writeParams`); the field lists are
// the module's declaration order, which a test holds to the compiler's offsets (test-layouts.ts).
// RunParams (the in-module loop over a whole unchunked call) is the forward's.
import type { WasmContext } from "../context.js";
import {
  KEY_PACK_FIELDS,
  MODS_BLOCK_FIELDS,
  ROW_BLOCK_FIELDS,
  writeParams,
  writeRunParams,
  type RunParams,
} from "./attention-params.js";

/** GradPackParams' fields, in the module's order (4 bytes each). */
export const GRAD_PACK_FIELDS = [...KEY_PACK_FIELDS, "mode", "dst", "scratch"] as const;

/**
 * GradBlockParams' fields, in the module's order (4 bytes each): q's, grad's, out's and lse's rows, then the forward's
 * fields with `mode` before the output. `scale` and `keptScale` are float32, the rest integers.
 */
export const GRAD_BLOCK_FIELDS = [
  "qb",
  "qs2",
  "gb",
  "gs2",
  "ob",
  "os2",
  "lb",
  "ls2",
  ...ROW_BLOCK_FIELDS,
  "mode",
  ...MODS_BLOCK_FIELDS,
] as const;

/** What one call computes, as the module numbers it. */
export const GRAD_MODE = { lse: 0, q: 1, k: 2, v: 3 } as const;
export type GradMode = (typeof GRAD_MODE)[keyof typeof GRAD_MODE];

export type GradPackParams = Readonly<Record<(typeof GRAD_PACK_FIELDS)[number], number>>;
export type GradBlockParams = Readonly<Record<(typeof GRAD_BLOCK_FIELDS)[number], number>>;

/** Packs keys [s0, s1) of one kv head (see attentionGradPack); wrt q, 1 when a key row there holds a NaN or ±∞. */
export function attentionGradPack(ctx: WasmContext, params: number, p: GradPackParams): number {
  return ctx.exports.attentionGradPack(writeParams(ctx, params, GRAD_PACK_FIELDS, p));
}

/** Runs key blocks of one query block (see attentionGradBlock); the key blocks still to run, 0 when done. */
export function attentionGradBlock(ctx: WasmContext, params: number, p: GradBlockParams): number {
  return ctx.exports.attentionGradBlock(writeParams(ctx, params, GRAD_BLOCK_FIELDS, p));
}

/** Writes keys [s0, s1) of a kv head's dk or dv accumulator to `dst` (see attentionGradFlush). */
export function attentionGradFlush(ctx: WasmContext, params: number, p: GradPackParams): void {
  ctx.exports.attentionGradFlush(writeParams(ctx, params, GRAD_PACK_FIELDS, p));
}

/**
 * A whole unchunked call (see attentionGradRun): `pack` and `block` with their per-head addresses at batch, kv head
 * and head 0, `run` the counts and the batch and head strides; the module makes every pack, block and flush call itself.
 */
export function attentionGradRun(
  ctx: WasmContext,
  params: number,
  pack: GradPackParams,
  block: GradBlockParams,
  run: RunParams,
): void {
  const [p, b, r] = writeRunParams(ctx, params, GRAD_PACK_FIELDS, pack, GRAD_BLOCK_FIELDS, block, run);
  ctx.exports.attentionGradRun(p, b, r);
}
