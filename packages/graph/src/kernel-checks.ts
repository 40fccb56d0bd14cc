// Checks every executor's kernels make on a call before touching memory, written once: ranks and dims of inputs,
// attribute values (a call may come from a user dispatching by hand, not only from a validated graph), and the mask
// geometry the mask and fused attention kernels share. Each error names `<node>.<field>`, says what was expected and
// what came. They read only shapes and attributes, so they work on any executor's values (host tensors, wasm values,
// GPU buffers); they sit beside the executor contract and the op declarations they follow.
import { AttnGraphError, ShapeError, describe, formatShape, type Shape } from "@attngraph/tensor";
import type { KernelCall } from "./executor-contract.js";
import { USER_MASK_AXES, type MaskGeometry } from "./ops/mask.js";

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

/** The alignment offset: 0 for "top-left", S − L for "bottom-right" (query i is then aligned with key i + S − L). */
export function maskOffset(alignment: MaskGeometry["alignment"], nl: number, ns: number): number {
  return alignment === "bottom-right" ? ns - nl : 0;
}

/** The window size kernels take: 0 (none) unless causal with a window. */
export function windowOf(attrs: Pick<MaskGeometry, "causal" | "window">): number {
  return attrs.causal && attrs.window !== null ? attrs.window : 0;
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

/** An "input" error naming `<node>.<field>`: a value a kernel cannot take (not a shape or attribute problem). */
export function kernelInputError(
  call: CallInfo,
  field: string,
  what: string,
  expected: string,
  got: string,
): AttnGraphError {
  const subject = `${call.node}.${field}`;
  return new AttnGraphError("input", describe(subject, what, expected, got), { subject, expected, got });
}

/**
 * A value of the wrong element type in an input slot (int32 ids in a float slot, float32 in `ids`/`targets`): an
 * "input" error naming `<node>.<name>`, worded the same on every executor.
 */
export function dtypeError(call: CallInfo, slot: number, name: string, expected: string, got: string): AttnGraphError {
  return kernelInputError(call, name, `input ${slot} (${name}) of op ${call.kind} has the wrong dtype`, expected, got);
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

export function showValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
