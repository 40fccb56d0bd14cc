// Checks every executor's kernels make on a call before touching memory, written once: ranks and dims of inputs,
// attribute values (a call may come from a user dispatching by hand, not only from a validated graph), and the mask
// geometry the mask and fused attention kernels share. Each error names `<node>.<field>`, says what was expected and
// what came. They read only shapes and attributes, so they work on any executor's values (host tensors, wasm values,
// GPU buffers); they sit beside the executor contract and the op declarations they follow.
import { AttnGraphError, ShapeError, describe, formatShape, type Shape } from "@attngraph/tensor";
import type { KernelCall } from "./executor-contract.js";
import type { DropoutAttrs } from "./ops/dropout.js";
import { broadcastShapes } from "./broadcast.js";
import type { CrossEntropyAttrs } from "./ops/cross-entropy.js";
import type { GeluAttrs } from "./ops/gelu.js";
import { USER_MASK_AXES, type MaskAttrs, type MaskGeometry } from "./ops/mask.js";

/** What the checks read of a call: node, op kind and attributes. */
export type CallInfo = Pick<KernelCall<unknown>, "node" | "kind" | "attrs">;

/** Anything with a shape: an executor's value. */
export interface Shaped {
  readonly shape: Shape;
}

/** A value with element strides (host tensors, wasm values): what broadcasting kernels index with. */
export interface Strided extends Shaped {
  readonly strides: readonly number[];
}

/** Rank check; `legend` is the expected shape in the shape legend, e.g. "[B, H, L, D]". */
export function expectRank(call: CallInfo, name: string, t: Shaped, rank: number, legend: string): void {
  if (t.shape.length !== rank)
    throw new ShapeError(`${call.node}.${name}`, `op ${call.kind} needs rank ${rank}`, legend, formatShape(t.shape));
}

/** One dim must equal another: `what` says which ("head dim D of k must match q"). */
export function expectDim(call: CallInfo, name: string, what: string, expected: number, got: number, t: Shaped): void {
  if (expected !== got)
    throw new ShapeError(`${call.node}.${name}`, what, String(expected), `${got} in ${formatShape(t.shape)}`);
}

/** Grouped-query attention: H query heads share Hkv key/value heads, so Hkv must divide H. */
export function expectHeadGroups(call: CallInfo, name: string, h: number, hkv: number, t: Shaped): void {
  if (hkv === 0 ? h !== 0 : h % hkv !== 0) {
    throw new ShapeError(
      `${call.node}.${name}`,
      "query heads H must be a multiple of key/value heads Hkv",
      `a divisor of H=${h}`,
      `Hkv=${hkv} in ${formatShape(t.shape)}`,
    );
  }
}

/** An "attr" error naming `<node>.<field>`. */
export function attrError(call: CallInfo, field: string, expected: string, value: unknown): AttnGraphError {
  const subject = `${call.node}.${field}`;
  const got = showValue(value);
  return new AttnGraphError("attr", describe(subject, `invalid attribute of op ${call.kind}`, expected, got), {
    subject,
    expected,
    got,
  });
}

/** The mask attributes { causal, window, alignment } of a call (mask or attention), each checked; absent window = null. */
export function checkMaskAttrs(call: CallInfo): MaskGeometry {
  const { causal, alignment } = call.attrs as Partial<MaskAttrs>;
  const window = (call.attrs as Partial<MaskAttrs>).window ?? null; // absent = no window, as normalizeAttrs does
  if (typeof causal !== "boolean") throw attrError(call, "causal", "true or false", causal);
  if (window !== null && (!Number.isInteger(window) || window < 1))
    throw attrError(call, "window", "null or an integer >= 1", window);
  if (window !== null && !causal) throw attrError(call, "window", "a sliding window only with causal: true", window);
  if (alignment !== "top-left" && alignment !== "bottom-right")
    throw attrError(call, "alignment", '"top-left" or "bottom-right"', alignment);
  return { causal, window, alignment };
}

/** The alignment offset: 0 for "top-left", S − L for "bottom-right" (query i is then aligned with key i + S − L). */
export function maskOffset(alignment: MaskGeometry["alignment"], nl: number, ns: number): number {
  return alignment === "bottom-right" ? ns - nl : 0;
}

/** The window size kernels take: 0 (none) unless causal with a window. */
export function windowOf(attrs: Pick<MaskGeometry, "causal" | "window">): number {
  return attrs.causal && attrs.window !== null ? attrs.window : 0;
}

/** A score scale attribute (softmax, attention, alibi): a finite number. */
export function checkScale(call: CallInfo, field = "scale"): number {
  const scale = call.attrs[field];
  if (typeof scale !== "number" || !Number.isFinite(scale)) throw attrError(call, field, "a finite number", scale);
  return scale;
}

/** The mask op's `scale` (visible scores are multiplied by it before the bias is added); absent = 1. */
export function checkMaskScale(call: CallInfo): MaskAttrs["scale"] {
  return checkGradScale(call);
}

/**
 * A user mask or bias input of the mask op ([L, S], [B, L, S] or [B, H, L, S], dims of 1 broadcast) against scores
 * [B, H, L, S]: the rank and dims checked, naming `<node>.<field>`; returns its strides over [B, H, L, S] in elements,
 * 0 on every axis it does not have or holds once (so `offset + b·s0 + h·s1 + i·s2 + j·s3` reads it for any index).
 */
export function userMaskStrides(
  call: CallInfo,
  field: string,
  scores: readonly number[],
  m: Strided,
): [number, number, number, number] {
  const axes = USER_MASK_AXES[m.shape.length];
  if (!axes)
    throw new ShapeError(
      `${call.node}.${field}`,
      `a user ${field} is [L, S], [B, L, S] or [B, H, L, S]`,
      "rank 2, 3 or 4",
      formatShape(m.shape),
    );
  const out: [number, number, number, number] = [0, 0, 0, 0];
  const legend = "BHLS";
  axes.forEach((axis, i) => {
    const d = m.shape[i]!;
    if (d !== 1 && d !== scores[axis]) {
      throw new ShapeError(
        `${call.node}.${field}`,
        `${field} dim ${legend[axis]} must match the scores or be 1`,
        `${scores[axis]} or 1`,
        `${d} in ${formatShape(m.shape)}`,
      );
    }
    out[axis] = d === 1 ? 0 : m.strides[i]!;
  });
  return out;
}

/** The first value of a 0/1 user mask that is neither (NaN included), as "<value> at [i, j, …]", or undefined. */
export function findNonBinary(values: ArrayLike<number>, shape: readonly number[]): string | undefined {
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    if (v !== 0 && v !== 1) return `${v} at ${multiIndex(k, shape)}`;
  }
  return undefined;
}

/** A 0/1 user mask whose values are not all 0 or 1: an "input" error naming `<node>.<field>` and the element. */
export function nonBinaryMaskError(call: CallInfo, field: string, got: string): AttnGraphError {
  const subject = `${call.node}.${field}`;
  const expected = "0 (hidden key) or 1 (visible key)";
  return new AttnGraphError("input", describe(subject, "user mask values must be 0 or 1", expected, got), {
    subject,
    expected,
    got,
  });
}

/** A layer norm's optional weight and bias: each rank 1 of the normalized dim E, named `<node>.weight` / `<node>.bias`. */
export function expectNormParams(
  call: CallInfo,
  e: number,
  weight: Shaped | undefined,
  bias: Shaped | undefined,
): void {
  for (const [name, t] of [
    ["weight", weight],
    ["bias", bias],
  ] as const) {
    if (t === undefined) continue;
    expectRank(call, name, t, 1, "[E]");
    expectDim(call, name, `layer norm ${name} length must equal the normalized (last) dim E`, e, t.shape[0]!, t);
  }
}

/** An rms-norm's optional weight: rank 1 of the normalized dim E, named `<node>.weight`. */
export function expectRmsWeight(call: CallInfo, e: number, weight: Shaped | undefined): void {
  if (weight === undefined) return;
  expectRank(call, "weight", weight, 1, "[E]");
  expectDim(
    call,
    "weight",
    "rms norm weight length must equal the normalized (last) dim E",
    e,
    weight.shape[0]!,
    weight,
  );
}

/**
 * The sums' shape [..., E] of an add-layer-norm call, whose outShape is [..., 2E]: an odd last dim, a and b that do not
 * broadcast to [..., E] exactly, or no axis at all are errors naming `<node>.out`, `.b` or `.a`.
 */
export function addLayerNormShape(
  call: CallInfo & { readonly outShape: Shape },
  a: Shaped,
  b: Shaped,
): { readonly sumShape: number[]; readonly e: number } {
  const twoE = call.outShape[call.outShape.length - 1];
  if (twoE !== undefined && twoE % 2 !== 0) {
    throw new ShapeError(
      `${call.node}.out`,
      "the last dim of outShape must be 2E: the sums and their layer norm side by side",
      "an even number",
      formatShape(call.outShape),
    );
  }
  // The sums' shape is the outShape with half its last dim: addShape checks that a and b broadcast to exactly that.
  const sumShape = addShape(
    { ...call, outShape: twoE === undefined ? call.outShape : [...call.outShape.slice(0, -1), twoE / 2] },
    a,
    b,
  );
  if (sumShape.length < 1)
    throw new ShapeError(`${call.node}.a`, `${call.kind} needs at least one axis`, "[..., E]", formatShape(sumShape));
  return { sumShape, e: sumShape[sumShape.length - 1]! };
}

/**
 * A value of the wrong element type in an input slot (int32 ids in a float slot, float32 in `ids`/`targets`): an
 * "input" error naming `<node>.<name>`, worded the same on every executor.
 */
export function dtypeError(call: CallInfo, slot: number, name: string, expected: string, got: string): AttnGraphError {
  const subject = `${call.node}.${name}`;
  return new AttnGraphError(
    "input",
    describe(subject, `input ${slot} (${name}) of op ${call.kind} has the wrong dtype`, expected, got),
    { subject, expected, got },
  );
}

/** LayerNorm's eps: a finite number > 0. */
export function checkLayerNormEps(call: CallInfo): number {
  const eps = call.attrs["eps"];
  if (typeof eps !== "number" || !Number.isFinite(eps) || !(eps > 0))
    throw attrError(call, "eps", "a finite number > 0", eps);
  return eps;
}

/** GELU's form: "none" (exact, erf) or "tanh". */
export function checkGeluApproximate(call: CallInfo): GeluAttrs["approximate"] {
  const a = call.attrs["approximate"] ?? "none";
  if (a !== "none" && a !== "tanh") throw attrError(call, "approximate", '"none" or "tanh"', a);
  return a;
}

/** Cross-entropy attributes: ignoreIndex (null or an int32 integer) and reduction. */
export function checkCrossEntropyAttrs(call: CallInfo): CrossEntropyAttrs {
  const ignoreIndex = call.attrs["ignoreIndex"] ?? null;
  const reduction = call.attrs["reduction"] ?? "mean";
  if (
    ignoreIndex !== null &&
    (!Number.isInteger(ignoreIndex) || (ignoreIndex as number) < -(2 ** 31) || (ignoreIndex as number) >= 2 ** 31)
  ) {
    throw attrError(call, "ignoreIndex", "null or an int32 integer", ignoreIndex);
  }
  if (reduction !== "mean" && reduction !== "sum" && reduction !== "none")
    throw attrError(call, "reduction", '"mean", "sum" or "none"', reduction);
  return { ignoreIndex: ignoreIndex as number | null, reduction };
}

/** The broadcast shape of an add's two inputs, which must equal the call's outShape. */
export function addShape(call: CallInfo & { readonly outShape: Shape }, a: Shaped, b: Shaped): number[] {
  const out = broadcastShapes(a.shape, b.shape, (i, da, db) => {
    throw new ShapeError(
      `${call.node}.b`,
      `shapes do not broadcast at axis ${i} from the end`,
      `${da} or 1`,
      `${db} in ${formatShape(b.shape)}`,
    );
  }) as number[];
  if (out.length !== call.outShape.length || out.some((d, i) => d !== call.outShape[i])) {
    throw new ShapeError(
      `${call.node}.out`,
      "outShape must be the broadcast shape of a and b",
      formatShape(out),
      formatShape(call.outShape),
    );
  }
  return out;
}

/**
 * The first id outside [0, v) of an embedding's ids (or a cross-entropy's targets, where `skip` is the ignore index),
 * as an "input" error naming `<node>.<field>`, the position and the id; undefined when all are in range.
 */
export function findBadIndex(
  call: CallInfo,
  field: string,
  ids: ArrayLike<number>,
  shape: readonly number[],
  v: number,
  what: string,
  skip: number | null = null,
): AttnGraphError | undefined {
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    if ((id < 0 || id >= v) && id !== skip) {
      const subject = `${call.node}.${field}`;
      const expected = `${what} in [0, ${v})${skip === null ? "" : ` or ${skip} (ignored)`}`;
      const got = `${id} at ${multiIndex(k, shape)}`;
      return new AttnGraphError("input", describe(subject, `${what} out of range`, expected, got), {
        subject,
        expected,
        got,
      });
    }
  }
  return undefined;
}

/**
 * position-embedding's (and its gradient's) bound offset against T positions and a table of `rows` rows: an integer
 * >= 0 (a named offset reaches kernels bound; a string here is an unbound call, an "attr" error), and offset + T <= P
 * (a shape error naming `<node>.offset`), so no kernel ever reads or writes a row past the table.
 */
export function checkPositionOffset(call: CallInfo, t: number, rows: number): number {
  const offset = call.attrs["offset"] ?? 0;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0)
    throw attrError(call, "offset", "an integer >= 0 (a dim name must be bound before the kernel runs)", offset);
  if (offset + t > rows) {
    throw new ShapeError(
      `${call.node}.offset`,
      `positions ${offset}..${offset + t - 1} run past the table's P rows (the block size)`,
      `offset + T <= P = ${rows}`,
      `${offset} + ${t} = ${offset + t}`,
    );
  }
  return offset;
}

/** A row-major index as a multi-index, for messages: 13 in [2, 3, 4] → "[1, 0, 1]". */
export function multiIndex(flat: number, shape: readonly number[]): string {
  const idx: number[] = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    const n = shape[d]!;
    idx.unshift(n === 0 ? 0 : flat % n);
    flat = n === 0 ? 0 : Math.floor(flat / n);
  }
  return `[${idx.join(", ")}]`;
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
export function checkDropoutAttrs(
  call: CallInfo,
  fields: DropoutFields = DROPOUT_FIELDS,
  defaults?: DropoutAttrs,
): DropoutAttrs {
  const rate = call.attrs[fields.rate] ?? defaults?.rate;
  const seed = call.attrs[fields.seed] ?? defaults?.seed;
  const training = call.attrs[fields.training] ?? defaults?.training;
  if (typeof training !== "boolean") throw attrError(call, fields.training, "true or false", training);
  if (typeof rate !== "number" || !(rate >= 0 && rate < 1))
    throw attrError(call, fields.rate, "a number with 0 <= rate < 1", rate);
  if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw attrError(call, fields.seed, "an integer in 0..2^32-1", seed);
  return { rate, seed, training };
}

/** A backward op's `scale` (softmax-grad, mask-grad): a finite number; absent = 1, the declared default. */
export function checkGradScale(call: CallInfo): number {
  return call.attrs["scale"] === undefined ? 1 : checkScale(call);
}

export function showValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
