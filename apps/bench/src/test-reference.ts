// For tests only: the benchmark's attention in float64, written out loop by loop with no library, so that every
// implementation (attngraph's cpu executor included) is checked against something that shares no code with it.
import {
  MLP_RATIO,
  type BlockProblem,
  type DecodeProblem,
  type Problem,
  type TrainBlockProblem,
  type TrainCopyProblem,
} from "./problem.js";

/** y = causal multi-head attention with out_proj (bias) of p.x, in float64. */
export function referenceAttention(p: Problem): Float64Array {
  const { b, t, d } = p.shape;
  const linear = (x: ArrayLike<number>, w: Float32Array, rows: number) => {
    const y = new Float64Array(rows * d);
    for (let r = 0; r < rows; r++)
      for (let o = 0; o < d; o++) {
        let acc = 0;
        for (let i = 0; i < d; i++) acc += x[r * d + i]! * w[o * d + i]!;
        y[r * d + o] = acc;
      }
    return y;
  };
  const q = linear(p.x, p.wq, b * t);
  const k = linear(p.x, p.wk, b * t);
  const v = linear(p.x, p.wv, b * t);
  const ctx = causalHeads(q, k, v, p.shape, p.scale);
  const y = linear(ctx, p.wo, b * t);
  for (let r = 0; r < b * t; r++) for (let o = 0; o < d; o++) y[r * d + o]! += p.bo[o]!;
  return y;
}

/**
 * A decode problem as the attention problem it is one step of: x = [prompt; token] per batch entry, [b, T + 1, d],
 * same weights. Its causal output's last position is the decoding step's output.
 */
export function decodeAsAttention(p: DecodeProblem): Problem {
  const { b, t, d } = p.shape;
  const x = new Float32Array(b * (t + 1) * d);
  for (let n = 0; n < b; n++) {
    x.set(p.prompt.subarray(n * t * d, (n + 1) * t * d), n * (t + 1) * d);
    x.set(p.token.subarray(n * d, (n + 1) * d), (n * (t + 1) + t) * d);
  }
  return { ...p, kind: "attention", shape: { ...p.shape, t: t + 1 }, x };
}

/** The last position of each batch entry of y [b, n, d]: [b, 1, d]. */
export function lastPositions(
  y: ArrayLike<number>,
  shape: { readonly b: number; readonly d: number },
  n: number,
): Float64Array {
  const { b, d } = shape;
  const out = new Float64Array(b * d);
  for (let i = 0; i < b; i++) for (let e = 0; e < d; e++) out[i * d + e] = y[(i * n + n - 1) * d + e]!;
  return out;
}

/** One decoding step in float64: the last position of the causal attention over [prompt; token], [b, 1, d]. */
export function referenceDecode(p: DecodeProblem): Float64Array {
  return lastPositions(referenceAttention(decodeAsAttention(p)), p.shape, p.shape.t + 1);
}

/**
 * The pre-norm transformer block of p.x in float64 (see BlockProblem): LayerNorm (biased variance), causal MHA with the
 * fused qkv_proj split into q, k, v by rows, residual, LayerNorm, mlp.2(GELU_erf(mlp.0(·))), residual.
 */
export function referenceBlock(p: Omit<BlockProblem, "kind">, x: ArrayLike<number> = p.x): Float64Array {
  const { b, t, d } = p.shape;
  const rows = b * t;
  const hidden = MLP_RATIO * d;
  // y [rows, out] = x [rows, in] · Wᵀ (+ bias), W [out, in] starting at row `w0` of a bigger matrix.
  const linear = (x: ArrayLike<number>, inF: number, w: Float32Array, outF: number, bias?: Float32Array, w0 = 0) => {
    const y = new Float64Array(rows * outF);
    for (let r = 0; r < rows; r++)
      for (let o = 0; o < outF; o++) {
        let acc = bias ? bias[o]! : 0;
        for (let i = 0; i < inF; i++) acc += x[r * inF + i]! * w[(w0 + o) * inF + i]!;
        y[r * outF + o] = acc;
      }
    return y;
  };
  const layerNorm = (x: ArrayLike<number>, weight: Float32Array, bias: Float32Array) => {
    const y = new Float64Array(rows * d);
    for (let r = 0; r < rows; r++) {
      let mean = 0;
      for (let i = 0; i < d; i++) mean += x[r * d + i]!;
      mean /= d;
      let v = 0;
      for (let i = 0; i < d; i++) v += (x[r * d + i]! - mean) ** 2;
      const inv = 1 / Math.sqrt(v / d + p.eps);
      for (let i = 0; i < d; i++) y[r * d + i] = (x[r * d + i]! - mean) * inv * weight[i]! + bias[i]!;
    }
    return y;
  };
  const ln1 = layerNorm(x, p.ln1w, p.ln1b);
  const q = linear(ln1, d, p.wqkv, d, undefined, 0);
  const k = linear(ln1, d, p.wqkv, d, undefined, d);
  const v = linear(ln1, d, p.wqkv, d, undefined, 2 * d);
  const ctx = causalHeads(q, k, v, p.shape, p.scale);
  const attention = linear(ctx, d, p.wo, d);
  const residual = attention.map((a, i) => x[i]! + a);
  const ln2 = layerNorm(residual, p.ln2w, p.ln2b);
  const hid = linear(ln2, d, p.w1, hidden, p.b1).map((z) => 0.5 * z * (1 + erf(z / Math.SQRT2)));
  const mlp = linear(hid, hidden, p.w2, d, p.b2);
  return residual.map((r, i) => r + mlp[i]!);
}

/**
 * The loss of a training problem's first step (before any update), in float64: for train-block
 * L = sum(block(x) ⊙ gradOutput); for train-copy the mean cross-entropy of output(block(embed[tokens] + pos_embed))
 * against targets = tokens.
 */
export function referenceFirstLoss(p: TrainBlockProblem | TrainCopyProblem): number {
  if (p.kind === "train-block") {
    const y = referenceBlock(p);
    return y.reduce((acc, v, i) => acc + v * p.gradOutput[i]!, 0);
  }
  const { b, t, d } = p.shape;
  const V = p.vocab;
  const x = new Float64Array(b * t * d);
  for (let r = 0; r < b * t; r++)
    for (let i = 0; i < d; i++) x[r * d + i] = p.embed[p.tokens[r]! * d + i]! + p.pos[(r % t) * d + i]!;
  const h = referenceBlock({ ...p.block, shape: p.shape, x: new Float32Array(0), scale: p.scale, eps: p.eps }, x);
  let loss = 0;
  for (let r = 0; r < b * t; r++) {
    const logits = Array.from({ length: V }, (_, o) => {
      let acc = p.bOut[o]!;
      for (let i = 0; i < d; i++) acc += h[r * d + i]! * p.wOut[o * d + i]!;
      return acc;
    });
    const max = Math.max(...logits);
    const lse = max + Math.log(logits.reduce((a, z) => a + Math.exp(z - max), 0));
    loss += lse - logits[p.tokens[r]!]!;
  }
  return loss / (b * t);
}

/**
 * erf in float64 to about 1e-15: its Maclaurin series for |x| < 2.5, the continued fraction of erfc beyond (W. J.
 * Cody's split); far more accurate than any float32 result it checks.
 */
export function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    // erf x = 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1))
    let term = ax;
    let sum = ax;
    for (let n = 1; n < 200 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
      term *= (-ax * ax) / n;
      sum += term / (2 * n + 1);
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc x = exp(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …))))), evaluated bottom-up.
  let f = ax;
  for (let n = 60; n >= 1; n--) f = ax + n / 2 / f;
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

/** max |a − ref|. */
export function maxAbsDiff(a: ArrayLike<number>, ref: ArrayLike<number>): number {
  if (a.length !== ref.length) return Infinity;
  let m = 0;
  for (let i = 0; i < ref.length; i++) m = Math.max(m, Math.abs(a[i]! - ref[i]!));
  return Number.isNaN(m) ? Infinity : m;
}

/**
 * The attention core both references share: softmax(scale · q·kᵀ + causal mask) · v per batch and head, over q, k, v
 * [b·t, d] with the heads side by side (head h is columns h·D … h·D + D − 1); heads merged back the same way.
 */
function causalHeads(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  shape: { readonly b: number; readonly t: number; readonly d: number; readonly h: number },
  scale: number,
): Float64Array {
  const { b, t, d, h } = shape;
  const D = d / h;
  const ctx = new Float64Array(b * t * d);
  for (let n = 0; n < b; n++)
    for (let head = 0; head < h; head++)
      for (let i = 0; i < t; i++) {
        const s: number[] = [];
        for (let j = 0; j <= i; j++) {
          let acc = 0;
          for (let e = 0; e < D; e++) acc += q[(n * t + i) * d + head * D + e]! * k[(n * t + j) * d + head * D + e]!;
          s.push(acc * scale);
        }
        const max = Math.max(...s);
        const ex = s.map((z) => Math.exp(z - max));
        const sum = ex.reduce((a, z) => a + z, 0);
        for (let e = 0; e < D; e++) {
          let acc = 0;
          for (let j = 0; j <= i; j++) acc += (ex[j]! / sum) * v[(n * t + j) * d + head * D + e]!;
          ctx[(n * t + i) * d + head * D + e] = acc;
        }
      }
  return ctx;
}
