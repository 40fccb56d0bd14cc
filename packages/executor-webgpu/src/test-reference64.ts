// Float64 references for the block-op tests, written here from the op declarations (packages/graph/src/ops) and
// PyTorch's definitions, independent of every executor and of the testkit. Plain loops over row-major number arrays;
// strided inputs are compared through their logical (row-major) values.

/** nn.LayerNorm over rows of length e: two-pass mean and biased variance. */
export function layerNorm64(
  x: readonly number[],
  e: number,
  eps: number,
  w?: readonly number[],
  b?: readonly number[],
): number[] {
  const out: number[] = [];
  for (let o = 0; o < x.length; o += e) {
    const row = x.slice(o, o + e);
    const mean = row.reduce((s, v) => s + v, 0) / e;
    const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / e;
    const inv = 1 / Math.sqrt(variance + eps);
    row.forEach((v, j) => out.push((v - mean) * inv * (w ? w[j]! : 1) + (b ? b[j]! : 0)));
  }
  return out;
}

/** nn.Linear over rows of length nIn: x · Wᵀ + b, weight [nOut, nIn] row-major. */
export function linear64(
  x: readonly number[],
  nIn: number,
  w: readonly number[],
  nOut: number,
  b?: readonly number[],
): number[] {
  const out: number[] = [];
  for (let o = 0; o < x.length; o += nIn) {
    for (let n = 0; n < nOut; n++) {
      let s = b ? b[n]! : 0;
      for (let k = 0; k < nIn; k++) s += x[o + k]! * w[n * nIn + k]!;
      out.push(s);
    }
  }
  return out;
}

/**
 * erf to about 1e-14: the Maclaurin series below |x| = 3 (terms stay under e⁹, so about 4 of 16 digits are lost to
 * cancellation), else erfc's continued fraction x·e^{x²}·√π·erfc(x) = 1/(1 + 1/(2x²)/(1 + 2/(2x²)/(1 + …))) summed
 * from the tail.
 */
export function erf64(x: number): number {
  const a = Math.abs(x);
  if (a < 3) {
    let term = x;
    let sum = x;
    for (let n = 1; n < 100; n++) {
      term *= (-x * x) / n;
      sum += term / (2 * n + 1);
    }
    return (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(a) = e^{−a²}/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …))))
  let f = a;
  for (let k = 60; k >= 1; k--) f = a + k / 2 / f;
  const erfc = Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

/** erfc(x) = 1 − erf(x), with the upper tail from the continued fraction (no cancellation there). */
export function erfc64(x: number): number {
  if (x < 3) return 1 - erf64(x);
  let f = x;
  for (let k = 60; k >= 1; k--) f = x + k / 2 / f;
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

export function gelu64(x: number, approximate: "none" | "tanh"): number {
  if (approximate === "tanh") return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
  // x · Φ(x), the lower tail through erfc so large negative x keeps its relative accuracy.
  return 0.5 * x * erfc64(-x / Math.SQRT2);
}

/** The row-major multi-index of flat index `f` in `shape`. */
export function unravel(f: number, shape: readonly number[]): number[] {
  const idx = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = f % shape[d]!;
    f = Math.floor(f / shape[d]!);
  }
  return idx;
}

/** The flat row-major index in `shape` of a multi-index aligned to its last axes, dims of 1 broadcasting. */
export function broadcastIndex(idx: readonly number[], shape: readonly number[]): number {
  const lead = idx.length - shape.length;
  return shape.reduce((flat, d, k) => flat * d + (d === 1 ? 0 : idx[lead + k]!), 0);
}

/** a + b with NumPy broadcasting into `out` (the broadcast shape). */
export function add64(
  a: readonly number[],
  as: readonly number[],
  b: readonly number[],
  bs: readonly number[],
  out: readonly number[],
): number[] {
  const n = out.reduce((p, d) => p * d, 1);
  return Array.from({ length: n }, (_, f) => {
    const idx = unravel(f, out);
    return a[broadcastIndex(idx, as)]! + b[broadcastIndex(idx, bs)]!;
  });
}

/** Per-position cross-entropy of rows of length v; ignored positions give 0 and are not counted. */
export function crossEntropy64(
  logits: readonly number[],
  v: number,
  targets: readonly number[],
  reduction: "mean" | "sum" | "none",
  ignoreIndex: number | null = null,
): number[] {
  const per = targets.map((t, r) => {
    if (t === ignoreIndex) return 0;
    const row = logits.slice(r * v, r * v + v);
    const max = Math.max(...row);
    return Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0)) + max - row[t]!;
  });
  if (reduction === "none") return per;
  const total = per.reduce((s, x) => s + x, 0);
  const count = targets.filter((t) => t !== ignoreIndex).length;
  return [reduction === "sum" ? total : count === 0 ? 0 : total / count];
}

export interface MaskRef {
  readonly causal?: boolean;
  readonly window?: number | null;
  readonly bottomRight?: boolean;
  readonly scale?: number;
  /** [B, S], 1 = padded key. */
  readonly pad?: readonly number[];
  readonly user?: { readonly data: readonly number[]; readonly shape: readonly number[] };
  readonly bias?: { readonly data: readonly number[]; readonly shape: readonly number[] };
}

/** The mask op on scores [B, H, L, S]: hidden (by any mask, or already −∞) → −∞, else scale · score + bias. */
export function mask64(scores: readonly number[], shape: readonly number[], m: MaskRef): number[] {
  const [nb, nh, nl, ns] = shape as [number, number, number, number];
  const off = m.bottomRight ? ns - nl : 0;
  // A user input of rank 2 is [L, S], of rank 3 [B, L, S]: place it on the B, H, L, S axes it stands for.
  const full = (s: readonly number[]): number[] =>
    s.length === 2 ? [1, 1, ...s] : s.length === 3 ? [s[0]!, 1, s[1]!, s[2]!] : [...s];
  return scores.map((x, f) => {
    const [b, h, i, j] = unravel(f, [nb, nh, nl, ns]) as [number, number, number, number];
    let hidden = x === -Infinity;
    if (m.causal && j > i + off) hidden = true;
    if (m.window != null && j <= i + off - m.window) hidden = true;
    if (m.pad && m.pad[b * ns + j] === 1) hidden = true;
    if (m.user && m.user.data[broadcastIndex([b, h, i, j], full(m.user.shape))] === 0) hidden = true;
    if (hidden) return -Infinity;
    return (m.scale ?? 1) * x + (m.bias ? m.bias.data[broadcastIndex([b, h, i, j], full(m.bias.shape))]! : 0);
  });
}
