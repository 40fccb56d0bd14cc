// Output checks: the difference between two outputs, relative to the second one's largest magnitude. run.ts compares
// every output with every other one, and reports the max |Δ| against the first implementation's output.

/**
 * Relative tolerance: max |out − ref| / max |ref| above this marks the row as a mismatch. The same for
 * `--problem block`: LayerNorm divides the residual's rounding error by its standard deviation, and the block chains
 * four contractions instead of two, yet every pair of the six implementations agreed within 1.3e-6 relative at
 * 1,128,768,12 and 1,512,768,12 (README "Block"), so there is no reason to let a block through with more: 1e-3 keeps a
 * margin of ~1000× and still catches a wrong qkv_proj split, a dropped LayerNorm affine or MLP bias. Subtler slips
 * (GELU's tanh form in place of its erf form moves the output by far less) are below it; the unit tests catch those
 * against a float64 reference at 1e-5 (peers.test.ts, block-model.test.ts).
 */
export const RELATIVE_TOLERANCE = 1e-3;

export interface Diff {
  /** max |out − ref| over all elements (Infinity for a NaN, or for outputs of different lengths). */
  readonly maxAbsDiff: number;
  /** maxAbsDiff / max |ref|. */
  readonly relDiff: number;
  readonly ok: boolean;
}

export function diff(out: Float32Array, ref: Float32Array, tolerance = RELATIVE_TOLERANCE): Diff {
  if (out.length !== ref.length) return { maxAbsDiff: Infinity, relDiff: Infinity, ok: false };
  let maxAbsDiff = 0;
  let scale = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = Math.abs(out[i]! - ref[i]!);
    if (!(e <= maxAbsDiff)) maxAbsDiff = Number.isNaN(e) ? Infinity : e; // NaN never compares, so it lands here
    const r = Math.abs(ref[i]!);
    if (r > scale) scale = r;
  }
  const relDiff = maxAbsDiff === 0 ? 0 : maxAbsDiff / (scale > 0 ? scale : Number.MIN_VALUE);
  return { maxAbsDiff, relDiff, ok: relDiff <= tolerance };
}

/**
 * Element by element relative: max over i of |out_i − ref_i| / |ref_i|, for a few numbers of different magnitudes that
 * each must agree (a training step's losses: see run.ts). maxAbsDiff as in diff.
 */
export function diffEach(out: Float32Array, ref: Float32Array, tolerance = RELATIVE_TOLERANCE): Diff {
  if (out.length !== ref.length) return { maxAbsDiff: Infinity, relDiff: Infinity, ok: false };
  let maxAbsDiff = 0;
  let relDiff = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = Math.abs(out[i]! - ref[i]!);
    const r = e === 0 ? 0 : e / Math.max(Math.abs(ref[i]!), Number.MIN_VALUE);
    if (!(e <= maxAbsDiff)) maxAbsDiff = Number.isNaN(e) ? Infinity : e;
    if (!(r <= relDiff)) relDiff = Number.isNaN(r) ? Infinity : r;
  }
  return { maxAbsDiff, relDiff, ok: relDiff <= tolerance };
}

/** The pair of outputs that differ most (relative to the second of the pair), or undefined with fewer than two. */
export function worstPair(
  outputs: ReadonlyMap<string, Float32Array>,
  compare: (out: Float32Array, ref: Float32Array) => Diff = diff,
): { a: string; b: string; diff: Diff } | undefined {
  const names = [...outputs.keys()];
  let worst: { a: string; b: string; diff: Diff } | undefined;
  for (let i = 0; i < names.length; i++) {
    for (let j = 0; j < names.length; j++) {
      if (i === j) continue;
      const d = compare(outputs.get(names[i]!)!, outputs.get(names[j]!)!);
      if (!worst || d.relDiff > worst.diff.relDiff) worst = { a: names[i]!, b: names[j]!, diff: d };
    }
  }
  return worst;
}

/** What the majority rule says of one output among a group's: its diff against the first, and whom it disagrees with. */
export interface Agreement {
  readonly reference: string;
  readonly maxAbsDiff: number;
  readonly relDiff: number;
  readonly disagreesWith: string[];
  readonly status: "ok" | "mismatch";
}

/**
 * Output `name` against the others of its group (in order; the first is the reference): a mismatch when it disagrees
 * (either way round) with more than half of the others. Undefined when it or the reference has no output.
 */
export function agreementOf(name: string, outputs: ReadonlyMap<string, Float32Array>): Agreement | undefined {
  const out = outputs.get(name);
  const [reference, refOut] = [...outputs][0] ?? [];
  if (!out || !refOut || reference === undefined) return undefined;
  const names = [...outputs.keys()];
  const agree = (a: string, b: string) =>
    diff(outputs.get(a)!, outputs.get(b)!).ok && diff(outputs.get(b)!, outputs.get(a)!).ok;
  const d = diff(out, refOut);
  const disagreesWith = names.filter((n) => n !== name && !agree(name, n));
  const status = disagreesWith.length * 2 > names.length - 1 ? "mismatch" : "ok";
  return { reference, maxAbsDiff: d.maxAbsDiff, relDiff: d.relDiff, disagreesWith, status };
}
