// The per-row pieces the norm kernels share (layer-norm, add-layer-norm, rms-norm and their gradients): the row
// statistics, the optional [E] weight and bias, and layer norm's output row. One definition each, so a gradient
// recomputes exactly the numbers its forward kernel used.
import type { StridedView } from "./strided.js";

/** Mean and 1/sqrt(biased var + eps) of one row of n values at data[base + j·stride], in float64 (as layerNormImpl). */
export function rowStats(
  data: Float32Array,
  base: number,
  n: number,
  stride: number,
  eps: number,
): { readonly mean: number; readonly rstd: number } {
  let sum = 0;
  for (let j = 0, p = base; j < n; j++, p += stride) sum += data[p]!;
  const mean = sum / n;
  let sq = 0;
  for (let j = 0, p = base; j < n; j++, p += stride) {
    const d = data[p]! - mean;
    sq += d * d;
  }
  return { mean, rstd: 1 / Math.sqrt(sq / n + eps) };
}

/** 1/sqrt(mean(x²) + eps) of one row, summed in float64 (LlamaRMSNorm upcasts to float32; wider is at least as good). */
export function rmsOf(data: Float32Array, base: number, n: number, stride: number, eps: number): number {
  let sq = 0;
  for (let j = 0, p = base; j < n; j++, p += stride) sq += data[p]! * data[p]!;
  return 1 / Math.sqrt(sq / n + eps);
}

/** An optional [E] parameter (weight, bias) as plain locals for a hot loop: element j is data[offset + j · stride]. */
export interface ParamVector {
  /** Undefined when the parameter is absent (weight 1, bias 0). */
  readonly data: Float32Array | undefined;
  readonly stride: number;
  readonly offset: number;
}

export function paramVector(view: StridedView | undefined): ParamVector {
  return { data: view?.data, stride: view?.strides[0] ?? 0, offset: view?.offset ?? 0 };
}

/**
 * One row of layer norm's output: y[o + j] = (src[base + j·stride] − mean) · rstd · weight + bias, an absent weight 1
 * (not multiplied) and an absent bias 0.
 */
export function layerNormRow(
  src: Float32Array,
  base: number,
  stride: number,
  n: number,
  mean: number,
  rstd: number,
  weight: ParamVector,
  bias: ParamVector,
  y: Float32Array,
  o: number,
): void {
  const { data: wd, stride: ws, offset: wo } = weight;
  const { data: bd, stride: bs, offset: bo } = bias;
  for (let j = 0, p = base; j < n; j++, p += stride) {
    const v = (src[p]! - mean) * rstd;
    y[o + j] = (wd === undefined ? v : v * wd[wo + j * ws]!) + (bd === undefined ? 0 : bd[bo + j * bs]!);
  }
}
