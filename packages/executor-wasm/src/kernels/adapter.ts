// What every kernel adapter needs between a KernelCall and the module: fetch inputs by slot, check ranks, dims and
// attributes with the CPU executor's errors (each naming `<node>.<field>`), and the mask/softmax/dropout attribute
// rules. Kernels never trap on bad calls: everything the module would index is checked here first.
import { AttnGraphError, ShapeError, describe, formatShape } from "@attngraph/tensor";
import type { DropoutAttrs, KernelCall, MaskAttrs, SoftmaxAttrs } from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import { WasmValue } from "../value.js";

export type Call = KernelCall<WasmValue>;

export function requireInput(call: Call, slot: number, name: string): WasmValue {
  const v = optionalInput(call, slot, name);
  if (v === undefined) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError("input", describe(subject, `missing required input ${slot} (${name}) of op ${call.kind}`, "a value", "undefined"), {
      subject,
      expected: "a value",
      got: "undefined",
    });
  }
  return v;
}

export function optionalInput(call: Call, slot: number, name: string): WasmValue | undefined {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) return undefined;
  if (!(v instanceof WasmValue)) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError("input", describe(subject, `input ${slot} (${name}) of op ${call.kind} is not a wasm value`, "a WasmValue", typeof v), {
      subject,
      expected: "a WasmValue",
      got: typeof v,
    });
  }
  return v;
}

export function expectRank(call: Call, name: string, t: WasmValue, rank: number, legend: string): void {
  if (t.rank !== rank) throw new ShapeError(`${call.node}.${name}`, `op ${call.kind} needs rank ${rank}`, legend, formatShape(t.shape));
}

export function expectDim(call: Call, name: string, what: string, expected: number, got: number, t: WasmValue): void {
  if (expected !== got) throw new ShapeError(`${call.node}.${name}`, what, String(expected), `${got} in ${formatShape(t.shape)}`);
}

export function expectHeadGroups(call: Call, name: string, h: number, hkv: number, t: WasmValue): void {
  if (hkv === 0 ? h !== 0 : h % hkv !== 0) {
    throw new ShapeError(`${call.node}.${name}`, "query heads H must be a multiple of key/value heads Hkv", `a divisor of H=${h}`, `Hkv=${hkv} in ${formatShape(t.shape)}`);
  }
}

export function attrError(call: Call, field: string, expected: string, value: unknown): AttnGraphError {
  const subject = `${call.node}.${field}`;
  const got = showValue(value);
  return new AttnGraphError("attr", describe(subject, `invalid attribute of op ${call.kind}`, expected, got), { subject, expected, got });
}

/** The mask attributes { causal, window, alignment }, each checked; absent window = null. */
export function checkMaskAttrs(call: Call): MaskAttrs {
  const { causal, alignment } = call.attrs as Partial<MaskAttrs>;
  const window = (call.attrs as Partial<MaskAttrs>).window ?? null;
  if (typeof causal !== "boolean") throw attrError(call, "causal", "true or false", causal);
  if (window !== null && (!Number.isInteger(window) || window < 1)) throw attrError(call, "window", "null or an integer >= 1", window);
  if (window !== null && !causal) throw attrError(call, "window", "a sliding window only with causal: true", window);
  if (alignment !== "top-left" && alignment !== "bottom-right") throw attrError(call, "alignment", '"top-left" or "bottom-right"', alignment);
  return { causal, window, alignment };
}

/** The alignment offset: 0 for "top-left", S − L for "bottom-right". */
export function maskOffset(alignment: MaskAttrs["alignment"], nl: number, ns: number): number {
  return alignment === "bottom-right" ? ns - nl : 0;
}

/** The window size the module takes: 0 (none) unless causal with a window. */
export function windowOf(attrs: Pick<MaskAttrs, "causal" | "window">): number {
  return attrs.causal && attrs.window !== null ? attrs.window : 0;
}

export function checkScale(call: Call): number {
  const { scale } = call.attrs as Partial<SoftmaxAttrs>;
  if (typeof scale !== "number" || !Number.isFinite(scale)) throw attrError(call, "scale", "a finite number", scale);
  return scale;
}

export interface DropoutFields {
  readonly rate: string;
  readonly seed: string;
  readonly training: string;
}

const DROPOUT_FIELDS: DropoutFields = { rate: "rate", seed: "seed", training: "training" };

export function checkDropoutAttrs(call: Call, fields: DropoutFields = DROPOUT_FIELDS, defaults?: DropoutAttrs): DropoutAttrs {
  const rate = call.attrs[fields.rate] ?? defaults?.rate;
  const seed = call.attrs[fields.seed] ?? defaults?.seed;
  const training = call.attrs[fields.training] ?? defaults?.training;
  if (typeof training !== "boolean") throw attrError(call, fields.training, "true or false", training);
  if (typeof rate !== "number" || !(rate >= 0 && rate < 1)) throw attrError(call, fields.rate, "a number with 0 <= rate < 1", rate);
  if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw attrError(call, fields.seed, "an integer in 0..2^32-1", seed);
  return { rate, seed, training };
}

/** MurmurHash3's 32-bit finaliser (the dropout spec's fmix32), for the seed the module takes pre-mixed. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Elements whose bits are below this uint32 are dropped: floor(rate · 2³²), clamped to 2³² − 1. */
export function dropoutThreshold(rate: number): number {
  return Math.min(Math.floor(rate * 2 ** 32), 2 ** 32 - 1);
}

/**
 * Checks a key padding mask [B, S] against batch `nb` and key length `ns`, and that every value is exactly 0 or 1
 * (read from the module's memory), before anything is written: the CPU executor's rule and error.
 */
export function checkKeyPadding(call: Call, ctx: WasmContext, pad: WasmValue, nb: number, ns: number, batchOf: string): void {
  expectRank(call, "keyPaddingMask", pad, 2, "[B, S]");
  expectDim(call, "keyPaddingMask", `batch B of the padding mask must match the ${batchOf}`, nb, pad.shape[0]!, pad);
  expectDim(call, "keyPaddingMask", "padding mask length must equal the key length S", ns, pad.shape[1]!, pad);
  const f32 = ctx.f32();
  const base = pad.address / 4;
  const [ps0, ps1] = pad.strides as [number, number];
  for (let b = 0; b < nb; b++) {
    for (let j = 0; j < ns; j++) {
      const v = f32[base + b * ps0 + j * ps1]!;
      if (v !== 0 && v !== 1) {
        const subject = `${call.node}.keyPaddingMask`;
        const got = `${v} at [${b}, ${j}]`;
        throw new AttnGraphError("input", describe(subject, "key padding values must be 1 (padded key) or 0 (real key)", "0 or 1", got), {
          subject,
          expected: "0 or 1",
          got,
        });
      }
    }
  }
}

/**
 * Whether writing a dense result into `out` could overwrite elements of `input` before they are read: the same block,
 * overlapping, and not exactly the input's own dense elements (which the in-place kernels read before writing).
 */
export function clobbers(out: WasmValue, input: WasmValue): boolean {
  if (out.block !== input.block) return false;
  const [lo, hi] = input.span();
  const oLo = out.offset;
  const oHi = out.offset + out.size - 1;
  if (oHi < lo || hi < oLo) return false;
  return !(input.dense && input.offset === out.offset);
}

/**
 * Runs `write(dst)` for an in-place capable op: into `ctx.output` directly, or, when that would clobber the input
 * before it is read (an out aliasing a strided input), into a temporary first.
 */
export function writeInPlace(call: Call, ctx: WasmContext, input: WasmValue, write: (dst: WasmValue) => void): WasmValue {
  const out = ctx.output(call, input.shape);
  if (!clobbers(out, input)) {
    write(out);
    return out;
  }
  const tmp = ctx.alloc(input.shape, `${call.node} (temporary)`);
  try {
    write(tmp);
    ctx.copy(tmp, out);
  } finally {
    ctx.release(tmp);
  }
  return out;
}

/** Runs `fill(out)`; when it throws (e.g. a memory limit on a temporary), a freshly allocated `out` is released. */
export function filling(call: Call, ctx: WasmContext, out: WasmValue, fill: () => void): WasmValue {
  try {
    fill();
  } catch (e) {
    if (out !== call.out) ctx.release(out);
    throw e;
  }
  return out;
}

function showValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
