// The fused attention's entry points read their numbers from params blocks in memory (assembly/attention.ts,
// PackParams, BlockParams and RunParams), as the WebGPU kernels read a params uniform. The host writes them here field
// by field by name, so a call can no longer pass two numbers in each other's place; the field lists are the module's
// declaration order, which a test holds to the compiler's offsets (test-layouts.ts). A chunked call drives
// the per-head pieces (`attentionPack`, `attentionBlock`) one by one; an unchunked one makes a single `attentionRun`,
// which loops over batches, heads and query blocks in the module (its three blocks side by side in the params area).
import type { WasmContext } from "../context.js";

/**
 * The leading fields of the forward's PackParams and the backward's GradPackParams alike (the two modules declare
 * them in this order): one kv head's keys, values and padding, the sizes, and the key range [s0, s1) to pack.
 */
export const KEY_PACK_FIELDS = [
  "kb",
  "ks2",
  "ks3",
  "vb",
  "vs2",
  "vs3",
  "pb",
  "ps1",
  "ns",
  "nd",
  "ndv",
  "s0",
  "s1",
] as const;

/** PackParams' fields, in the module's order (4 bytes each). */
export const PACK_FIELDS = [...KEY_PACK_FIELDS, "scratch"] as const;

/**
 * The fields after the row operands in the forward's BlockParams and the backward's GradBlockParams alike: the query
 * block, the sizes, the mask, the dropout and the key block range (`scale` and `keptScale` float32, the rest integers).
 */
export const ROW_BLOCK_FIELDS = [
  "i0",
  "br",
  "ns",
  "nd",
  "ndv",
  "causal",
  "off",
  "win",
  "scale",
  "dropping",
  "mixedSeed",
  "threshold",
  "keptScale",
  "padded",
  "headRow",
  "anyBad",
  "fromBlock",
  "maxBlocks",
] as const;

/** The fields after those (and the backward's `mode`) in both: the output, the scratch and the modification's. */
export const MODS_BLOCK_FIELDS = ["out", "scratch", "prog", "regs", "bi", "hi"] as const;

/** BlockParams' fields, in the module's order (4 bytes each). `scale` and `keptScale` are float32, the rest integers. */
export const BLOCK_FIELDS = [
  "qb",
  "qs2",
  ...ROW_BLOCK_FIELDS,
  ...MODS_BLOCK_FIELDS,
  "classes",
  "clsQB",
  "clsBlk",
  "clsH",
  "clsByB",
  "progAll",
] as const;

/**
 * RunParams' fields, in the module's order (4 bytes each, integers): the counts and the batch and head strides of the
 * in-module loop over a whole call (`attentionRun`, `attentionGradRun`); 0 for a tensor the call lacks. `attentionRun`
 * runs batches [b0, b1) and kv heads [g0, g1) (a thread's share; 0, B, 0, Hkv for a whole call).
 */
export const RUN_FIELDS = [
  "nb",
  "nh",
  "nhkv",
  "nl",
  "qs0",
  "qs1",
  "ks0",
  "ks1",
  "vs0",
  "vs1",
  "ps0",
  "gs0",
  "gs1",
  "os0",
  "os1",
  "ls0",
  "ls1",
  "b0",
  "b1",
  "g0",
  "g1",
] as const;

const FLOAT_FIELDS: ReadonlySet<string> = new Set(["scale", "keptScale"]);

export type PackParams = Readonly<Record<(typeof PACK_FIELDS)[number], number>>;
export type BlockParams = Readonly<Record<(typeof BLOCK_FIELDS)[number], number>>;
export type RunParams = Readonly<Record<(typeof RUN_FIELDS)[number], number>>;

/**
 * Writes `values` as the params block at `address`, each field at its index · 4 bytes: float fields (`scale`,
 * `keptScale`) as float32, the others as 32-bit integers (an unsigned value such as a seed keeps its bits). Shared with
 * the fused backward's params (attention-grad-params.ts).
 */
export function writeParams(
  ctx: WasmContext,
  address: number,
  fields: readonly string[],
  values: Readonly<Record<string, number>>,
): number {
  const ints = ctx.i32();
  const floats = ctx.f32();
  const base = address / 4;
  const float = floatFlags(fields);
  for (let i = 0; i < fields.length; i++) {
    const v = values[fields[i]!]!;
    if (float[i]) floats[base + i] = v;
    else ints[base + i] = v | 0;
  }
  return address;
}

const floatFlagsOf = new WeakMap<readonly string[], readonly boolean[]>();

/** Which of `fields` are float32, once per field list. */
function floatFlags(fields: readonly string[]): readonly boolean[] {
  let flags = floatFlagsOf.get(fields);
  if (flags === undefined) {
    flags = fields.map((f) => FLOAT_FIELDS.has(f));
    floatFlagsOf.set(fields, flags);
  }
  return flags;
}

/**
 * Writes three params blocks side by side from `address` (`first`, then `second`, then `run`, each by its field list)
 * and returns their addresses, for an entry taking all three (`attentionRun`, `attentionGradRun`). The params area
 * holds them all: the executor checks the module's `attentionParamsBytes` and `attentionGradParamsBytes` against it.
 */
export function writeRunParams(
  ctx: WasmContext,
  address: number,
  firstFields: readonly string[],
  first: Readonly<Record<string, number>>,
  secondFields: readonly string[],
  second: Readonly<Record<string, number>>,
  run: RunParams,
): [number, number, number] {
  const a = writeParams(ctx, address, firstFields, first);
  const b = writeParams(ctx, a + firstFields.length * 4, secondFields, second);
  const c = writeParams(ctx, b + secondFields.length * 4, RUN_FIELDS, run);
  return [a, b, c];
}

/** Packs keys [s0, s1) of one kv head (see attentionPack); 1 when a value row there holds a NaN or ±∞. */
export function attentionPack(ctx: WasmContext, params: number, p: PackParams): number {
  return ctx.exports.attentionPack(writeParams(ctx, params, PACK_FIELDS, p));
}

/** Runs key blocks of one query block (see attentionBlock); the key blocks still to run, 0 when the rows are written. */
export function attentionBlock(ctx: WasmContext, params: number, p: BlockParams): number {
  return ctx.exports.attentionBlock(writeParams(ctx, params, BLOCK_FIELDS, p));
}

/**
 * A whole call through one of the entries taking all three blocks: `attentionRun` (an unchunked call; the module makes
 * every pack and block call itself) or `attentionDecode` (few query rows, K and V read in place). `pack` and `block`
 * hold their per-head addresses at batch, kv head and head 0 (for the decode path `block.headRow` is the output row of
 * batch 0, head 0: 0 for a whole call, a kv head's first query head for a chunked step), `run` the counts and the
 * batch and head strides.
 */
export function attentionWhole(
  ctx: WasmContext,
  entry: "attentionRun" | "attentionDecode",
  params: number,
  pack: PackParams,
  block: BlockParams,
  run: RunParams,
): void {
  const [p, b, r] = writeRunParams(ctx, params, PACK_FIELDS, pack, BLOCK_FIELDS, block, run);
  ctx.exports[entry](p, b, r);
}
