// The fused attention's two entry points read their numbers from one params block in memory (assembly/attention.ts,
// PackParams and BlockParams), as the WebGPU kernels read a params uniform. The host writes it here field by field by
// name, so a call can no longer pass two numbers in each other's place; the field lists are the module's declaration
// order, which a test holds to the module's own offsets (`attentionParamsLayout`).
import type { WasmContext } from "../context.js";

/** PackParams' fields, in the module's order (4 bytes each). */
export const PACK_FIELDS = ["kb", "ks2", "ks3", "vb", "vs2", "vs3", "pb", "ps1", "ns", "nd", "ndv", "s0", "s1", "scratch"] as const;

/** BlockParams' fields, in the module's order (4 bytes each). `scale` and `keptScale` are float32, the rest integers. */
export const BLOCK_FIELDS = [
  "qb", "qs2", "i0", "br", "ns", "nd", "ndv",
  "causal", "off", "win", "scale",
  "dropping", "mixedSeed", "threshold", "keptScale",
  "padded", "headRow", "anyBad", "fromBlock", "maxBlocks",
  "out", "scratch",
] as const;

const FLOAT_FIELDS: ReadonlySet<string> = new Set(["scale", "keptScale"]);

export type PackParams = Readonly<Record<(typeof PACK_FIELDS)[number], number>>;
export type BlockParams = Readonly<Record<(typeof BLOCK_FIELDS)[number], number>>;

/**
 * Writes `values` as the params block at `address`, each field at its index · 4 bytes: float fields (`scale`,
 * `keptScale`) as float32, the others as 32-bit integers (an unsigned value such as a seed keeps its bits). Shared with
 * the fused backward's params (attention-grad-params.ts).
 */
export function writeParams(ctx: WasmContext, address: number, fields: readonly string[], values: Readonly<Record<string, number>>): number {
  const ints = ctx.i32();
  const floats = ctx.f32();
  const base = address / 4;
  fields.forEach((f, i) => {
    const v = values[f]!;
    if (FLOAT_FIELDS.has(f)) floats[base + i] = v;
    else ints[base + i] = v | 0;
  });
  return address;
}

/** Packs keys [s0, s1) of one kv head (see attentionPack); 1 when a value row there holds a NaN or ±∞. */
export function attentionPack(ctx: WasmContext, params: number, p: PackParams): number {
  return ctx.exports.attentionPack(writeParams(ctx, params, PACK_FIELDS, p));
}

/** Runs key blocks of one query block (see attentionBlock); the key blocks still to run, 0 when the rows are written. */
export function attentionBlock(ctx: WasmContext, params: number, p: BlockParams): number {
  return ctx.exports.attentionBlock(writeParams(ctx, params, BLOCK_FIELDS, p));
}
