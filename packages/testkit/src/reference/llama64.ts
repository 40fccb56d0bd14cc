// Float64 references of a Llama block's ops (rms-norm, silu, mul) and their gradients, written from the formulas
// (LlamaRMSNorm, F.silu, torch.mul), independently of any executor's kernels.
import { broadcast64 } from "./block64.js";

/** 1/sqrt(mean(x²) + eps) of each row of length E. */
function rmsRows(x: Float64Array, e: number, eps: number): Float64Array {
  const r = new Float64Array(x.length / e);
  for (let o = 0, k = 0; o < x.length; o += e, k++) {
    let sq = 0;
    for (let j = 0; j < e; j++) sq += x[o + j]! * x[o + j]!;
    r[k] = 1 / Math.sqrt(sq / e + eps);
  }
  return r;
}

/** x / sqrt(mean(x²) + eps) · weight over rows of length E (weight absent = 1). */
export function rmsNorm64(x: Float64Array, e: number, eps: number, weight?: Float64Array): Float64Array {
  const r = rmsRows(x, e, eps);
  return x.map((v, i) => v * r[Math.floor(i / e)]! * (weight ? weight[i % e]! : 1));
}

/** dx of rmsNorm64: with x̂ = x · r and ĝ = grad ⊙ weight, r · (ĝ − x̂ · mean(ĝ ⊙ x̂)). */
export function rmsNormGrad64(
  grad: Float64Array,
  x: Float64Array,
  e: number,
  eps: number,
  weight?: Float64Array,
): Float64Array {
  const r = rmsRows(x, e, eps);
  const out = new Float64Array(x.length);
  for (let o = 0, k = 0; o < x.length; o += e, k++) {
    let mgx = 0;
    for (let j = 0; j < e; j++) mgx += grad[o + j]! * (weight ? weight[j]! : 1) * x[o + j]! * r[k]!;
    mgx /= e;
    for (let j = 0; j < e; j++)
      out[o + j] = r[k]! * (grad[o + j]! * (weight ? weight[j]! : 1) - x[o + j]! * r[k]! * mgx);
  }
  return out;
}

/** The weight gradient of rmsNorm64: Σ over rows of grad ⊙ x̂ → [E]. */
export function rmsNormWeightGrad64(grad: Float64Array, x: Float64Array, e: number, eps: number): Float64Array {
  const r = rmsRows(x, e, eps);
  const out = new Float64Array(e);
  for (let o = 0, k = 0; o < x.length; o += e, k++)
    for (let j = 0; j < e; j++) out[j]! += grad[o + j]! * x[o + j]! * r[k]!;
  return out;
}

/** sigmoid(v) from exp(−|v|) only, so it never overflows. */
function sigmoid64(v: number): number {
  const z = Math.exp(-Math.abs(v));
  return v >= 0 ? 1 / (1 + z) : z / (1 + z);
}

/** x · sigmoid(x). */
export function silu64(x: Float64Array): Float64Array {
  return x.map((v) => v * sigmoid64(v));
}

/** grad · s · (1 + x · (1 − s)), s = sigmoid(x) (PyTorch's silu_backward). */
export function siluGrad64(grad: Float64Array, x: Float64Array): Float64Array {
  return x.map((v, i) => {
    const s = sigmoid64(v);
    return grad[i]! * s * (1 + v * (1 - s));
  });
}

/** a · b with NumPy broadcasting. */
export function mul64(
  a: Float64Array,
  aShape: readonly number[],
  b: Float64Array,
  bShape: readonly number[],
): { shape: number[]; data: Float64Array } {
  return broadcast64(a, aShape, b, bShape, (p, q) => p * q, "mul64");
}
