// Checks every executor's kernels make on a call before touching memory, written once: ranks and dims of inputs,
// attribute values (a call may come from a user dispatching by hand, not only from a validated graph), and the mask
// geometry the mask and fused attention kernels share. Each error names `<node>.<field>`, says what was expected and
// what came. They read only shapes and attributes, so they work on any executor's values (host tensors, wasm values,
// GPU buffers); they sit beside the executor contract and the op declarations they follow.
import { AttnGraphError, ShapeError, describe, formatShape, type Shape } from "@attngraph/tensor";
import type { KernelCall } from "./executor-contract.js";
import type { DropoutAttrs } from "./ops/dropout.js";
import type { MaskAttrs } from "./ops/mask.js";

/** What the checks read of a call: node, op kind and attributes. */
export type CallInfo = Pick<KernelCall<unknown>, "node" | "kind" | "attrs">;

/** Anything with a shape: an executor's value. */
export interface Shaped {
  readonly shape: Shape;
}

/** Rank check; `legend` is the expected shape in the shape legend, e.g. "[B, H, L, D]". */
export function expectRank(call: CallInfo, name: string, t: Shaped, rank: number, legend: string): void {
  if (t.shape.length !== rank) throw new ShapeError(`${call.node}.${name}`, `op ${call.kind} needs rank ${rank}`, legend, formatShape(t.shape));
}

/** One dim must equal another: `what` says which ("head dim D of k must match q"). */
export function expectDim(call: CallInfo, name: string, what: string, expected: number, got: number, t: Shaped): void {
  if (expected !== got) throw new ShapeError(`${call.node}.${name}`, what, String(expected), `${got} in ${formatShape(t.shape)}`);
}

/** Grouped-query attention: H query heads share Hkv key/value heads, so Hkv must divide H. */
export function expectHeadGroups(call: CallInfo, name: string, h: number, hkv: number, t: Shaped): void {
  if (hkv === 0 ? h !== 0 : h % hkv !== 0) {
    throw new ShapeError(`${call.node}.${name}`, "query heads H must be a multiple of key/value heads Hkv", `a divisor of H=${h}`, `Hkv=${hkv} in ${formatShape(t.shape)}`);
  }
}

/** An "attr" error naming `<node>.<field>`. */
export function attrError(call: CallInfo, field: string, expected: string, value: unknown): AttnGraphError {
  const subject = `${call.node}.${field}`;
  const got = showValue(value);
  return new AttnGraphError("attr", describe(subject, `invalid attribute of op ${call.kind}`, expected, got), { subject, expected, got });
}

/** The mask attributes { causal, window, alignment } of a call (mask or attention), each checked; absent window = null. */
export function checkMaskAttrs(call: CallInfo): MaskAttrs {
  const { causal, alignment } = call.attrs as Partial<MaskAttrs>;
  const window = (call.attrs as Partial<MaskAttrs>).window ?? null; // absent = no window, as normalizeAttrs does
  if (typeof causal !== "boolean") throw attrError(call, "causal", "true or false", causal);
  if (window !== null && (!Number.isInteger(window) || window < 1)) throw attrError(call, "window", "null or an integer >= 1", window);
  if (window !== null && !causal) throw attrError(call, "window", "a sliding window only with causal: true", window);
  if (alignment !== "top-left" && alignment !== "bottom-right") throw attrError(call, "alignment", '"top-left" or "bottom-right"', alignment);
  return { causal, window, alignment };
}

/** The alignment offset: 0 for "top-left", S − L for "bottom-right" (query i is then aligned with key i + S − L). */
export function maskOffset(alignment: MaskAttrs["alignment"], nl: number, ns: number): number {
  return alignment === "bottom-right" ? ns - nl : 0;
}

/** The window size kernels take: 0 (none) unless causal with a window. */
export function windowOf(attrs: Pick<MaskAttrs, "causal" | "window">): number {
  return attrs.causal && attrs.window !== null ? attrs.window : 0;
}

/** A score scale attribute (softmax, attention, alibi): a finite number. */
export function checkScale(call: CallInfo, field = "scale"): number {
  const scale = call.attrs[field];
  if (typeof scale !== "number" || !Number.isFinite(scale)) throw attrError(call, field, "a finite number", scale);
  return scale;
}

/** Where a call keeps its dropout attributes: dropout's own names, or the fused attention's. */
export interface DropoutFields {
  readonly rate: string;
  readonly seed: string;
  readonly training: string;
}

const DROPOUT_FIELDS: DropoutFields = { rate: "rate", seed: "seed", training: "training" };

/**
 * Dropout attributes of a call, each checked and named by its field in errors. With `defaults`, an absent attribute
 * takes its default (the fused attention's dropout is optional); without, absent is an error.
 */
export function checkDropoutAttrs(call: CallInfo, fields: DropoutFields = DROPOUT_FIELDS, defaults?: DropoutAttrs): DropoutAttrs {
  const rate = call.attrs[fields.rate] ?? defaults?.rate;
  const seed = call.attrs[fields.seed] ?? defaults?.seed;
  const training = call.attrs[fields.training] ?? defaults?.training;
  if (typeof training !== "boolean") throw attrError(call, fields.training, "true or false", training);
  if (typeof rate !== "number" || !(rate >= 0 && rate < 1)) throw attrError(call, fields.rate, "a number with 0 <= rate < 1", rate);
  if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw attrError(call, fields.seed, "an integer in 0..2^32-1", seed);
  return { rate, seed, training };
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
