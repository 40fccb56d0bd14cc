// Float64 reference kernels, one per attention step, as plain loops over dense row-major Float64Arrays. Written from
// shared/golden/FORMAT.md and the op docs, never from an executor, so that agreeing with them means something.
// attention64.ts composes them, and attention64.test.ts proves the composition on every golden case.
// Legend: B batch, H heads, Hkv kv heads, L query length, S key length, D head dim, E model dim.
import { AttnGraphError, describe } from "@attngraph/tensor";

/** A dense row-major float64 array and its shape. */
export interface Tensor64 {
  shape: number[];
  data: Float64Array;
}

/** Mask attributes, as the mask op takes them. */
export interface Mask64 {
  readonly causal: boolean;
  /** With causal: query i sees keys j with i - window < j <= i (positions after alignment). */
  readonly window: number | null;
  /** "top-left": query i sits at key position i; "bottom-right": the last query sits at the last key. */
  readonly alignment: "top-left" | "bottom-right";
}

/** x [rows, In] · weight [Out, In]ᵀ (+ bias [Out]) → [rows, Out] (nn.Linear layout). */
export function linear64(
  x: Float64Array,
  inF: number,
  weight: Float64Array,
  outF: number,
  bias?: Float64Array,
): Float64Array {
  const rows = x.length / inF;
  const out = new Float64Array(rows * outF);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outF; o++) {
      let acc = bias ? bias[o]! : 0;
      for (let i = 0; i < inF; i++) acc += x[r * inF + i]! * weight[o * inF + i]!;
      out[r * outF + o] = acc;
    }
  }
  return out;
}

/** [B, T, nh·D] → [B, nh, T, D]: split heads, then put the head axis before the tokens. */
export function splitHeads64(x: Float64Array, b: number, t: number, nh: number, d: number): Float64Array {
  return swapMiddleAxes64(x, b, t, nh, d);
}

/** [B, nh, T, D] → [B, T, nh·D]: the inverse of splitHeads64 (heads merged). */
export function mergeHeads64(x: Float64Array, b: number, nh: number, t: number, d: number): Float64Array {
  return swapMiddleAxes64(x, b, nh, t, d);
}

/** [B, P, Q, D] → [B, Q, P, D]: splitting heads and merging them are this transpose, one way and back. */
function swapMiddleAxes64(x: Float64Array, b: number, p: number, q: number, d: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let bi = 0; bi < b; bi++)
    for (let i = 0; i < p; i++)
      for (let j = 0; j < q; j++)
        for (let di = 0; di < d; di++) out[((bi * q + j) * p + i) * d + di] = x[((bi * p + i) * q + j) * d + di]!;
  return out;
}

export interface HeadDims {
  readonly B: number;
  readonly H: number;
  readonly Hkv: number;
  readonly L: number;
  readonly S: number;
  readonly D: number;
}

/** HeadDims with the head dim of v (Dv), which may differ from q's and k's. */
export interface AttentionDims64 extends HeadDims {
  readonly Dv: number;
}

/** The kv head serving query head h: each kv head serves H/Hkv consecutive query heads (GQA; MQA when Hkv = 1). */
export function kvHead(h: number, H: number, Hkv: number): number {
  return Math.floor(h / (H / Hkv));
}

/**
 * Calls f(row, kv) for each query row (b, h, i) in order: row = (b·H + h)·L + i, the row's index in [B, H, L, ·], and
 * kv = (b·Hkv + g)·S, the first key row of h's kv head g in [B, Hkv, S, ·]. The walk of every product over the keys.
 */
export function eachQueryRow({ B, H, Hkv, L, S }: Omit<HeadDims, "D">, f: (row: number, kv: number) => void): void {
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const g = kvHead(h, H, Hkv);
      for (let i = 0; i < L; i++) f((b * H + h) * L + i, (b * Hkv + g) * S);
    }
}

/** q [B, H, L, D] · k [B, Hkv, S, D]ᵀ → scores [B, H, L, S], before scale and mask. */
export function score64(q: Float64Array, k: Float64Array, dims: HeadDims): Float64Array {
  const { B, H, L, S, D } = dims;
  const out = new Float64Array(B * H * L * S);
  eachQueryRow(dims, (row, kv) => {
    for (let j = 0; j < S; j++) {
      let acc = 0;
      for (let d = 0; d < D; d++) acc += q[row * D + d]! * k[(kv + j) * D + d]!;
      out[row * S + j] = acc;
    }
  });
  return out;
}

/**
 * scores [B, H, L, S] with hidden entries set to −∞. A key is hidden if any mask hides it (causal, window, or
 * pad [B, S] = 1). Padding flags other than 0 and 1 are an error: they are a bug upstream, not a third state.
 */
export function mask64(
  scores: Float64Array,
  B: number,
  H: number,
  L: number,
  S: number,
  m: Mask64,
  pad?: Float64Array,
): Float64Array {
  const out = Float64Array.from(scores);
  const shift = m.alignment === "bottom-right" ? S - L : 0;
  for (let b = 0; b < B; b++)
    for (let j = 0; j < S; j++) {
      const p = pad ? pad[b * S + j]! : 0;
      if (p !== 0 && p !== 1)
        throw new AttnGraphError(
          "validation",
          describe(`keyPaddingMask[${b}, ${j}]`, "invalid padding flag", "0 or 1", String(p)),
        );
      for (let h = 0; h < H; h++)
        for (let i = 0; i < L; i++) {
          const pos = i + shift;
          const hidden = p === 1 || (m.causal && j > pos) || (m.causal && m.window !== null && j <= pos - m.window);
          if (hidden) out[((b * H + h) * L + i) * S + j] = -Infinity;
        }
    }
  return out;
}

/**
 * softmax(scale · x) over rows of length S. A row with every entry −∞ (every key masked) gives zeros; a NaN anywhere in
 * a row makes the whole row NaN (as in PyTorch), so a NaN is never hidden.
 */
export function softmax64(x: Float64Array, S: number, scale: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / S; r++) {
    const o = r * S;
    let max = -Infinity;
    let nan = false;
    for (let j = 0; j < S; j++) {
      const z = scale * x[o + j]!;
      if (Number.isNaN(z)) nan = true;
      else if (z > max) max = z;
    }
    if (nan) {
      out.fill(NaN, o, o + S);
      continue;
    }
    if (max === -Infinity) continue; // fully masked row: zeros, never 0/0
    let sum = 0;
    for (let j = 0; j < S; j++) sum += out[o + j] = Math.exp(scale * x[o + j]! - max);
    for (let j = 0; j < S; j++) out[o + j]! /= sum;
  }
  return out;
}

/**
 * weights [B, H, L, S] · v [B, Hkv, S, D] → [B, H, L, D]; value heads shared like key heads. A weight of exactly 0 (a
 * masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row (FlashAttention semantics, as every
 * executor; PyTorch's math path gives 0 · NaN = NaN there).
 */
export function weightedSum64(w: Float64Array, v: Float64Array, dims: HeadDims): Float64Array {
  const { B, H, L, S, D } = dims;
  const out = new Float64Array(B * H * L * D);
  eachQueryRow(dims, (row, kv) => {
    for (let d = 0; d < D; d++) {
      let acc = 0;
      for (let j = 0; j < S; j++) {
        const wj = w[row * S + j]!;
        if (wj !== 0) acc += wj * v[(kv + j) * D + d]!; // a key weighed 0 adds nothing, not even NaN
      }
      out[row * D + d] = acc;
    }
  });
  return out;
}
