// Checks every executor's kernels make on a call before touching memory, written once: ranks and dims of inputs,
// attribute values (a call may come from a user dispatching by hand, not only from a validated graph), and the mask
// geometry the mask and fused attention kernels share. Each error names `<node>.<field>`, says what was expected and
// what came. They read only shapes and attributes, so they work on any executor's values (host tensors, wasm values,
// GPU buffers); they sit beside the executor contract and the op declarations they follow.
import { AttnGraphError, ShapeError, describe, formatShape, sameShape, type Shape } from "@attngraph/tensor";
import type { KernelCall } from "./executor-contract.js";
import type { DropoutAttrs } from "./ops/dropout.js";
import { broadcastShapes } from "./broadcast.js";
import type { AdamMomentAttrs, AdamStepAttrs } from "./ops/adam.js";
import type { ClipByNormAttrs } from "./ops/grad-norm.js";
import type { GradAccumulateAttrs } from "./ops/grad-accumulate.js";
import { ATTENTION_GRAD_WRT, type AttentionGradAttrs, type AttentionGradWrt, type AttentionLseAttrs } from "./ops/attention-grad.js";
import type { AttentionMods } from "./ops/attention-mods.js";
import type { CrossEntropyAttrs } from "./ops/cross-entropy.js";
import type { GeluAttrs } from "./ops/gelu.js";
import type { KvAppendAttrs } from "./ops/kv-append.js";
import type { PadAttrs } from "./ops/pad.js";
import type { SgdMomentumAttrs, SgdStepAttrs } from "./ops/sgd.js";
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
export function checkMaskAttrs(call: CallInfo): MaskGeometry {
  const { causal, alignment } = call.attrs as Partial<MaskAttrs>;
  const window = (call.attrs as Partial<MaskAttrs>).window ?? null; // absent = no window, as normalizeAttrs does
  if (typeof causal !== "boolean") throw attrError(call, "causal", "true or false", causal);
  if (window !== null && (!Number.isInteger(window) || window < 1)) throw attrError(call, "window", "null or an integer >= 1", window);
  if (window !== null && !causal) throw attrError(call, "window", "a sliding window only with causal: true", window);
  if (alignment !== "top-left" && alignment !== "bottom-right") throw attrError(call, "alignment", '"top-left" or "bottom-right"', alignment);
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
export function userMaskStrides(call: CallInfo, field: string, scores: readonly number[], m: Strided): [number, number, number, number] {
  const axes = USER_MASK_AXES[m.shape.length];
  if (!axes) throw new ShapeError(`${call.node}.${field}`, `a user ${field} is [L, S], [B, L, S] or [B, H, L, S]`, "rank 2, 3 or 4", formatShape(m.shape));
  const out: [number, number, number, number] = [0, 0, 0, 0];
  const legend = "BHLS";
  axes.forEach((axis, i) => {
    const d = m.shape[i]!;
    if (d !== 1 && d !== scores[axis]) {
      throw new ShapeError(`${call.node}.${field}`, `${field} dim ${legend[axis]} must match the scores or be 1`, `${scores[axis]} or 1`, `${d} in ${formatShape(m.shape)}`);
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
  return new AttnGraphError("input", describe(subject, "user mask values must be 0 or 1", expected, got), { subject, expected, got });
}

/** A layer norm's optional weight and bias: each rank 1 of the normalized dim E, named `<node>.weight` / `<node>.bias`. */
export function expectNormParams(call: CallInfo, e: number, weight: Shaped | undefined, bias: Shaped | undefined): void {
  for (const [name, t] of [["weight", weight], ["bias", bias]] as const) {
    if (t === undefined) continue;
    expectRank(call, name, t, 1, "[E]");
    expectDim(call, name, `layer norm ${name} length must equal the normalized (last) dim E`, e, t.shape[0]!, t);
  }
}

/** An rms-norm's optional weight: rank 1 of the normalized dim E, named `<node>.weight`. */
export function expectRmsWeight(call: CallInfo, e: number, weight: Shaped | undefined): void {
  if (weight === undefined) return;
  expectRank(call, "weight", weight, 1, "[E]");
  expectDim(call, "weight", "rms norm weight length must equal the normalized (last) dim E", e, weight.shape[0]!, weight);
}

/**
 * The sums' shape [..., E] of an add-layer-norm call, whose outShape is [..., 2E]: an odd last dim, a and b that do not
 * broadcast to [..., E] exactly, or no axis at all are errors naming `<node>.out`, `.b` or `.a`.
 */
export function addLayerNormShape(call: CallInfo & { readonly outShape: Shape }, a: Shaped, b: Shaped): { readonly sumShape: number[]; readonly e: number } {
  const twoE = call.outShape[call.outShape.length - 1];
  if (twoE !== undefined && twoE % 2 !== 0) {
    throw new ShapeError(`${call.node}.out`, "the last dim of outShape must be 2E: the sums and their layer norm side by side", "an even number", formatShape(call.outShape));
  }
  // The sums' shape is the outShape with half its last dim: addShape checks that a and b broadcast to exactly that.
  const sumShape = addShape({ ...call, outShape: twoE === undefined ? call.outShape : [...call.outShape.slice(0, -1), twoE / 2] }, a, b);
  if (sumShape.length < 1) throw new ShapeError(`${call.node}.a`, `${call.kind} needs at least one axis`, "[..., E]", formatShape(sumShape));
  return { sumShape, e: sumShape[sumShape.length - 1]! };
}

/**
 * A value of the wrong element type in an input slot (int32 ids in a float slot, float32 in `ids`/`targets`): an
 * "input" error naming `<node>.<name>`, worded the same on every executor.
 */
export function dtypeError(call: CallInfo, slot: number, name: string, expected: string, got: string): AttnGraphError {
  const subject = `${call.node}.${name}`;
  return new AttnGraphError("input", describe(subject, `input ${slot} (${name}) of op ${call.kind} has the wrong dtype`, expected, got), { subject, expected, got });
}

/** LayerNorm's eps: a finite number > 0. */
export function checkLayerNormEps(call: CallInfo): number {
  const eps = call.attrs["eps"];
  if (typeof eps !== "number" || !Number.isFinite(eps) || !(eps > 0)) throw attrError(call, "eps", "a finite number > 0", eps);
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
  if (ignoreIndex !== null && (!Number.isInteger(ignoreIndex) || (ignoreIndex as number) < -(2 ** 31) || (ignoreIndex as number) >= 2 ** 31)) {
    throw attrError(call, "ignoreIndex", "null or an int32 integer", ignoreIndex);
  }
  if (reduction !== "mean" && reduction !== "sum" && reduction !== "none") throw attrError(call, "reduction", '"mean", "sum" or "none"', reduction);
  return { ignoreIndex: ignoreIndex as number | null, reduction };
}

/** The broadcast shape of an add's two inputs, which must equal the call's outShape. */
export function addShape(call: CallInfo & { readonly outShape: Shape }, a: Shaped, b: Shaped): number[] {
  const out = broadcastShapes(a.shape, b.shape, (i, da, db) => {
    throw new ShapeError(`${call.node}.b`, `shapes do not broadcast at axis ${i} from the end`, `${da} or 1`, `${db} in ${formatShape(b.shape)}`);
  }) as number[];
  if (out.length !== call.outShape.length || out.some((d, i) => d !== call.outShape[i])) {
    throw new ShapeError(`${call.node}.out`, "outShape must be the broadcast shape of a and b", formatShape(out), formatShape(call.outShape));
  }
  return out;
}

/**
 * The first id outside [0, v) of an embedding's ids (or a cross-entropy's targets, where `skip` is the ignore index),
 * as an "input" error naming `<node>.<field>`, the position and the id; undefined when all are in range.
 */
export function findBadIndex(call: CallInfo, field: string, ids: ArrayLike<number>, shape: readonly number[], v: number, what: string, skip: number | null = null): AttnGraphError | undefined {
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    if ((id < 0 || id >= v) && id !== skip) {
      const subject = `${call.node}.${field}`;
      const expected = `${what} in [0, ${v})${skip === null ? "" : ` or ${skip} (ignored)`}`;
      const got = `${id} at ${multiIndex(k, shape)}`;
      return new AttnGraphError("input", describe(subject, `${what} out of range`, expected, got), { subject, expected, got });
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
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) throw attrError(call, "offset", "an integer >= 0 (a dim name must be bound before the kernel runs)", offset);
  if (offset + t > rows) {
    throw new ShapeError(`${call.node}.offset`, `positions ${offset}..${offset + t - 1} run past the table's P rows (the block size)`, `offset + T <= P = ${rows}`, `${offset} + ${t} = ${offset + t}`);
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
export function checkDropoutAttrs(call: CallInfo, fields: DropoutFields = DROPOUT_FIELDS, defaults?: DropoutAttrs): DropoutAttrs {
  const rate = call.attrs[fields.rate] ?? defaults?.rate;
  const seed = call.attrs[fields.seed] ?? defaults?.seed;
  const training = call.attrs[fields.training] ?? defaults?.training;
  if (typeof training !== "boolean") throw attrError(call, fields.training, "true or false", training);
  if (typeof rate !== "number" || !(rate >= 0 && rate < 1)) throw attrError(call, fields.rate, "a number with 0 <= rate < 1", rate);
  if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw attrError(call, fields.seed, "an integer in 0..2^32-1", seed);
  return { rate, seed, training };
}

// ---- backward ops (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, layer-norm(-weight)-grad, gelu-grad,
// embedding-grad, cross-entropy-grad) ----

/** `got` must have exactly `expected`'s shape (the paired operands of a backward or optimizer op): names `<node>.<name>`. */
export function expectSameShape(call: CallInfo, name: string, expected: Shaped, got: Shaped): void {
  if (!sameShape(expected.shape, got.shape)) throw new ShapeError(`${call.node}.${name}`, "shape must match", formatShape(expected.shape), formatShape(got.shape));
}

/** A row op's input needs a last axis: a scalar is a shape error naming `<node>.<name>`; `legend` e.g. "[..., E]". */
export function expectAxis(call: CallInfo, name: string, t: Shaped, legend = "[..., E]"): void {
  if (t.shape.length < 1) throw new ShapeError(`${call.node}.${name}`, `op ${call.kind} needs at least one axis`, legend, formatShape(t.shape));
}

/**
 * `got` must be `lead` followed by one more axis (embedding-grad's grad after its ids' shape): else a shape error
 * naming `<node>.<name>`; `what` says which.
 */
export function expectLeadingShape(call: CallInfo, name: string, what: string, lead: readonly number[], got: Shaped): void {
  const s = got.shape;
  if (s.length !== lead.length + 1 || lead.some((d, i) => d !== s[i])) {
    throw new ShapeError(`${call.node}.${name}`, what, `${formatShape(lead)} plus one axis`, formatShape(s));
  }
}

/** A backward op's `scale` (softmax-grad, mask-grad): a finite number; absent = 1, the declared default. */
export function checkGradScale(call: CallInfo): number {
  return call.attrs["scale"] === undefined ? 1 : checkScale(call);
}

/** An integer attribute `field` >= `min` (pad's before/after, embedding-grad's rows): an "attr" error otherwise. */
export function checkIntAttr(call: CallInfo, field: string, min: number): number {
  const v = call.attrs[field];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) throw attrError(call, field, `an integer >= ${min}`, v);
  return v;
}

/**
 * pad's attributes for an input of rank `rank`: axis an integer in -rank..rank-1 (returned counted from the front,
 * 0..rank-1), before and after integers >= 0. Errors name `<node>.<field>`.
 */
export function checkPadAttrs(call: CallInfo, rank: number): PadAttrs {
  const axis = call.attrs["axis"];
  if (typeof axis !== "number" || !Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw attrError(call, "axis", rank === 0 ? "no axis: x is a scalar" : `an integer in -${rank}..${rank - 1}`, axis);
  }
  const before = checkIntAttr(call, "before", 0);
  const after = checkIntAttr(call, "after", 0);
  return { axis: axis < 0 ? axis + rank : axis, before, after };
}

/**
 * sum-to's result shape (the call's outShape): x's shape with leading axes dropped and/or dims replaced by 1, lined up
 * from the last axis; else a shape error naming `<node>.shape`.
 */
export function checkSumToShape(call: CallInfo & { readonly outShape: Shape }, x: Shaped): Shape {
  const shape = call.outShape;
  if (shape.length > x.shape.length) throw new ShapeError(`${call.node}.shape`, "sum-to cannot add axes", `rank <= ${x.shape.length}`, formatShape(shape));
  const lead = x.shape.length - shape.length;
  shape.forEach((d, i) => {
    const xd = x.shape[lead + i]!;
    if (d !== 1 && d !== xd) throw new ShapeError(`${call.node}.shape`, `dim ${i} must equal x's or be 1`, `${xd} or 1`, `${d} in ${formatShape(shape)}`);
  });
  return shape;
}

/** linear-weight-grad's grad [..., Out] and x [..., In]: at least one axis, and the same leading axes (naming `.grad` / `.x`). */
export function expectLinearWeightGradShapes(call: CallInfo, grad: Shaped, x: Shaped): void {
  const g = grad.shape;
  expectAxis(call, "grad", grad, "[..., Out]");
  if (x.shape.length !== g.length) throw new ShapeError(`${call.node}.x`, "grad and x must have the same leading axes", `rank ${g.length}`, formatShape(x.shape));
  for (let i = 0; i < g.length - 1; i++) expectDim(call, "x", `x dim ${i} must match the gradient's`, g[i]!, x.shape[i]!, x);
}

/** Cross-entropy's (and its gradient's) logits [..., V] of rank >= 2 and targets of its shape without the class axis. */
export function expectCrossEntropyShapes(call: CallInfo, logits: Shaped, targets: Shaped): void {
  const l = logits.shape;
  if (l.length < 2) throw new ShapeError(`${call.node}.logits`, "cross-entropy needs logits with a class axis and at least one position axis", "[..., V] of rank >= 2", formatShape(l));
  if (targets.shape.length !== l.length - 1) {
    throw new ShapeError(`${call.node}.targets`, "targets must have the logits' shape without the class axis", formatShape(l.slice(0, -1)), formatShape(targets.shape));
  }
  targets.shape.forEach((d, i) => expectDim(call, "targets", `targets dim ${i} must match the logits`, l[i]!, d, targets));
}

/** cross-entropy-grad's loss gradient: the loss's shape, [] for "mean"/"sum", the targets' for "none" (naming `.grad`). */
export function expectLossGradShape(call: CallInfo, grad: Shaped, targets: Shaped, reduction: CrossEntropyAttrs["reduction"]): void {
  const want = reduction === "none" ? targets.shape : [];
  if (grad.shape.length !== want.length) throw new ShapeError(`${call.node}.grad`, "the loss gradient must have the loss's shape", formatShape(want), formatShape(grad.shape));
  want.forEach((d, i) => expectDim(call, "grad", `grad dim ${i} must match the targets`, d, grad.shape[i]!, grad));
}

// ---- optimizer ops (adam-moment, adam-step, sgd-momentum, sgd-step): attributes, each checked, absent ones taking
// the op's declared defaults, each error naming `<node>.<field>`; and the step count t ----

/** The number attribute `field`, absent = `fallback` (undefined: required), for which `ok` holds. */
function numberAttr(call: CallInfo, field: string, fallback: number | undefined, ok: (v: number) => boolean, expected: string): number {
  const v = fallback === undefined ? call.attrs[field] : (call.attrs[field] ?? fallback);
  if (typeof v !== "number" || !ok(v)) throw attrError(call, field, expected, v);
  return v;
}

/** The boolean attribute `field`, absent = false. */
function boolAttr(call: CallInfo, field: string): boolean {
  const v = call.attrs[field] ?? false;
  if (typeof v !== "boolean") throw attrError(call, field, "true or false", v);
  return v;
}

const positive = (call: CallInfo, field: string): number => numberAttr(call, field, undefined, (v) => v > 0 && v < Infinity, "a finite number > 0");
const nonNegative = (call: CallInfo, field: string, fallback?: number): number => numberAttr(call, field, fallback, (v) => v >= 0 && v < Infinity, "a finite number >= 0");
const belowOne = (call: CallInfo, field: string, fallback?: number): number => numberAttr(call, field, fallback, (v) => v >= 0 && v < 1, `a number with 0 <= ${field} < 1`);

/** adam-moment: beta in [0, 1) (required), square a boolean (false), weightDecay a finite number >= 0 (0). */
export function checkAdamMomentAttrs(call: CallInfo): AdamMomentAttrs {
  const beta = belowOne(call, "beta");
  const square = boolAttr(call, "square");
  const weightDecay = nonNegative(call, "weightDecay", 0);
  return { beta, square, weightDecay };
}

/**
 * adam-step: lr a finite number > 0 (required), beta1 and beta2 in [0, 1) (0.9, 0.999), eps and weightDecay finite
 * numbers >= 0 (1e-8, 0), decoupled a boolean (false).
 */
export function checkAdamStepAttrs(call: CallInfo): AdamStepAttrs {
  const lr = positive(call, "lr");
  const beta1 = belowOne(call, "beta1", 0.9);
  const beta2 = belowOne(call, "beta2", 0.999);
  const eps = nonNegative(call, "eps", 1e-8);
  const weightDecay = nonNegative(call, "weightDecay", 0);
  const decoupled = boolAttr(call, "decoupled");
  return { lr, beta1, beta2, eps, weightDecay, decoupled };
}

/** sgd-momentum: momentum a finite number >= 0 (required), dampening in [0, 1] (0), weightDecay a finite number >= 0 (0). */
export function checkSgdMomentumAttrs(call: CallInfo): SgdMomentumAttrs {
  const momentum = nonNegative(call, "momentum");
  const dampening = numberAttr(call, "dampening", 0, (v) => v >= 0 && v <= 1, "a number with 0 <= dampening <= 1");
  const weightDecay = nonNegative(call, "weightDecay", 0);
  return { momentum, dampening, weightDecay };
}

/**
 * sgd-step: lr a finite number > 0 (required), momentum and weightDecay finite numbers >= 0 (0, 0), nesterov a
 * boolean (false) that needs momentum > 0.
 */
export function checkSgdStepAttrs(call: CallInfo): SgdStepAttrs {
  const lr = positive(call, "lr");
  const momentum = nonNegative(call, "momentum", 0);
  const nesterov = boolAttr(call, "nesterov");
  const weightDecay = nonNegative(call, "weightDecay", 0);
  if (nesterov && momentum === 0) throw attrError(call, "nesterov", "false with momentum 0 (Nesterov momentum needs a momentum)", nesterov);
  return { lr, momentum, nesterov, weightDecay };
}

/** clip-by-norm: maxNorm a finite number > 0 (required), eps a finite number >= 0 (1e-6, torch's). */
export function checkClipByNormAttrs(call: CallInfo): ClipByNormAttrs {
  const maxNorm = positive(call, "maxNorm");
  const eps = nonNegative(call, "eps", 1e-6);
  return { maxNorm, eps };
}

/** grad-accumulate: scale a finite number > 0 (required). */
export function checkGradAccumulateAttrs(call: CallInfo): GradAccumulateAttrs {
  return { scale: positive(call, "scale") };
}

/** A one-element input (adam-step's lrScale, sum-squares' acc, clip-by-norm's sumSquares): [] or [1], else a shape error naming `<node>.<field>`. */
export function expectScalarShape(call: CallInfo, field: string, x: Shaped): void {
  const s = x.shape;
  if (!(s.length === 0 || (s.length === 1 && s[0] === 1))) throw new ShapeError(`${call.node}.${field}`, `op ${call.kind} takes ${field} as one number`, "[] or [1]", formatShape(s));
}

/**
 * adam-step's learning-rate factor as an executor read it: a finite number >= 0, returned; else an "input" error naming
 * `<node>.lrScale` (a schedule that returned NaN must not train on NaN).
 */
export function checkLrScaleValue(call: CallInfo, s: number): number {
  if (Number.isFinite(s) && s >= 0) return s;
  const subject = `${call.node}.lrScale`;
  const expected = "a finite number >= 0";
  const got = String(s);
  throw new AttnGraphError("input", describe(subject, `invalid learning-rate factor of op ${call.kind}`, expected, got), { subject, expected, got });
}

/** An optimizer's step input (adam-step, sgd-momentum) must be one number, shape [] or [1]: a shape error naming `<node>.step`. */
export function expectStepShape(call: CallInfo, step: Shaped): void {
  const s = step.shape;
  if (!(s.length === 0 || (s.length === 1 && s[0] === 1))) throw new ShapeError(`${call.node}.step`, `op ${call.kind} takes the step count as one number`, "[] or [1]", formatShape(s));
}

/**
 * The step count t an executor read from an optimizer's step input (from its memory, or the host copy of an upload):
 * an integer >= 1, returned; else an "input" error naming `<node>.step`.
 */
export function checkOptimizerStepValue(call: CallInfo, t: number): number {
  if (Number.isInteger(t) && t >= 1) return t;
  const subject = `${call.node}.step`;
  const expected = "an integer >= 1 (1 for the first step)";
  const got = String(t);
  throw new AttnGraphError("input", describe(subject, `invalid step count of op ${call.kind}`, expected, got), { subject, expected, got });
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

// ---- the fused attention backward (attention-lse, attention-grad) ----

const ATTENTION_DROPOUT: DropoutFields = { rate: "dropoutRate", seed: "dropoutSeed", training: "training" };
const NO_ATTENTION_DROPOUT: DropoutAttrs = { rate: 0, seed: 0, training: false };

/** attention-lse's attributes: the mask geometry and the softmax scale. */
export function checkAttentionLseAttrs(call: CallInfo): AttentionLseAttrs {
  // Field by field: a spread into a new literal costs microseconds on Node 20, and these run on every dispatch.
  const m = checkMaskAttrs(call);
  return { causal: m.causal, window: m.window, alignment: m.alignment, scale: checkScale(call), ...modsOf(call) };
}

/** The modification attributes as given (each kernel checks the expressions against its gathered inputs). */
export function modsOf(call: CallInfo): AttentionMods {
  const { scoreMod = null, maskMod = null, inputs = [] } = call.attrs as AttentionMods;
  return { scoreMod, maskMod, inputs };
}

/** attention-grad's attributes: the fused attention's (absent dropout = none) and `wrt`. */
export function checkAttentionGradAttrs(call: CallInfo): AttentionGradAttrs {
  const wrt = call.attrs["wrt"];
  if (!ATTENTION_GRAD_WRT.includes(wrt as AttentionGradWrt)) throw attrError(call, "wrt", '"q", "k", "v" or a gathered slot g0 … g7', wrt);
  const d = checkDropoutAttrs(call, ATTENTION_DROPOUT, NO_ATTENTION_DROPOUT);
  const m = checkMaskAttrs(call);
  return { causal: m.causal, window: m.window, alignment: m.alignment, scale: checkScale(call), dropoutRate: d.rate, dropoutSeed: d.seed, training: d.training, wrt: wrt as AttentionGradWrt, ...modsOf(call) };
}

/** q [B, H, L, D] and k [B, Hkv, S, D] of attention-lse and attention-grad; the padding mask's shape when there is one. */
export function expectAttentionQk(call: CallInfo, q: Shaped, k: Shaped, pad: Shaped | undefined): void {
  expectRank(call, "q", q, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  const [nb, nh] = q.shape as [number, number];
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, k.shape[1]!, k);
  expectDim(call, "k", "head dim D of keys must match the queries", q.shape[3]!, k.shape[3]!, k);
  if (pad !== undefined) {
    expectRank(call, "keyPaddingMask", pad, 2, "[B, S]");
    expectDim(call, "keyPaddingMask", "batch B of the padding mask must match the queries", nb, pad.shape[0]!, pad);
    expectDim(call, "keyPaddingMask", "padding mask length must equal the key length S", k.shape[2]!, pad.shape[1]!, pad);
  }
}

/** Every input of attention-grad: v [B, Hkv, S, Dv], out and grad [B, H, L, Dv], lse [B, H, L], and q, k, padding. */
export function expectAttentionGradShapes(call: CallInfo, q: Shaped, k: Shaped, v: Shaped, out: Shaped, grad: Shaped, lse: Shaped, pad: Shaped | undefined): void {
  expectAttentionQk(call, q, k, pad);
  expectRank(call, "v", v, 4, "[B, Hkv, S, Dv]");
  expectDim(call, "v", "batch B of values must match the queries", q.shape[0]!, v.shape[0]!, v);
  expectDim(call, "v", "values must have as many heads Hkv as keys", k.shape[1]!, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", k.shape[2]!, v.shape[2]!, v);
  const rows = [q.shape[0]!, q.shape[1]!, q.shape[2]!, v.shape[3]!];
  for (const [name, t] of [["out", out], ["grad", grad]] as const) {
    if (!sameShape(t.shape, rows)) throw new ShapeError(`${call.node}.${name}`, `${name} must be [B, H, L, Dv] of q and v`, formatShape(rows), formatShape(t.shape));
  }
  if (!sameShape(lse.shape, rows.slice(0, 3))) throw new ShapeError(`${call.node}.lse`, "lse must be [B, H, L] of q", formatShape(rows.slice(0, 3)), formatShape(lse.shape));
}

/**
 * kv-append's call checks, shared by every executor: ranks, B/Hkv/D equal to the cache's, `past` and `shift` bound
 * integers with past + L and shift + past within the cache, and a cache whose elements do not share memory (it is
 * written in place, and writes through a broadcast view would overwrite each other). Whether x aliases the cache's
 * memory is the executor's to check (only it knows where values live).
 */
export function checkKvAppend(call: CallInfo, cache: Strided, x: Shaped): { readonly past: number; readonly shift: number } {
  expectRank(call, "cache", cache, 4, "[B, Hkv, M, D]");
  expectRank(call, "x", x, 4, "[B, Hkv, L, D]");
  (["B", "Hkv", "", "D"] as const).forEach((name, i) => {
    if (name) expectDim(call, "x", `dim ${i} (${name}) must equal the cache's`, cache.shape[i]!, x.shape[i]!, x);
  });
  const { past, shift = 0 } = call.attrs as Partial<KvAppendAttrs>;
  const m = cache.shape[2]!;
  if (!Number.isSafeInteger(past) || (past as number) < 0) throw attrError(call, "past", "an integer >= 0 (the runtime binds a dim name)", past);
  if (!Number.isSafeInteger(shift) || (shift as number) < 0) throw attrError(call, "shift", "an integer >= 0 (the runtime binds a dim name)", shift);
  if ((past as number) + x.shape[2]! > m) throw attrError(call, "past", `past + L <= ${m} (the cache's length)`, `${past} + ${x.shape[2]}`);
  if ((shift as number) + (past as number) > m) throw attrError(call, "shift", `shift + past <= ${m} (the cache's length)`, `${shift} + ${past}`);
  if (overlapping(cache.shape, cache.strides)) {
    throw kernelInputError(call, "cache", "the cache is written in place, so no two of its elements may share memory", "a non-overlapping view", `strides ${formatShape(cache.strides)} for ${formatShape(cache.shape)}`);
  }
  return { past: past as number, shift: shift as number };
}

/** Whether two elements of a view share memory: sorted by stride, each dim must step past everything the smaller ones reach. */
function overlapping(shape: Shape, strides: readonly number[]): boolean {
  const dims = shape.map((n, i) => [n, Math.abs(strides[i]!)] as const).filter(([n]) => n > 1);
  dims.sort((p, q) => p[1] - q[1]);
  let reach = 0;
  for (const [n, s] of dims) {
    if (s <= reach) return true;
    reach += (n - 1) * s;
  }
  return false;
}

/** An "input" error naming `<node>.<field>`: a value a kernel cannot take (not a shape or attribute problem). */
export function kernelInputError(call: CallInfo, field: string, what: string, expected: string, got: string): AttnGraphError {
  const subject = `${call.node}.${field}`;
  return new AttnGraphError("input", describe(subject, what, expected, got), { subject, expected, got });
}
