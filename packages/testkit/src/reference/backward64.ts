// Float64 references for the backward ops (packages/graph/src/ops: sum-to, pad, linear-weight-grad, softmax-grad,
// mask-grad, layer-norm-grad, layer-norm-weight-grad, gelu-grad, embedding-grad, cross-entropy-grad; rope's `inverse`
// lives in rope64.ts). Plain loops over dense row-major Float64Arrays, written from the op docs and the calculus, never
// from an executor. backward64.test.ts proves each one against central finite differences of the forward references
// (ops64, block64, rope64), or, for the linear ones, against the adjoint identity ⟨f(x), y⟩ = ⟨x, fᵀ(y)⟩.
import { erf64, idAt, normalizedRows, rowMaxExpSum, targetAt } from "./block64.js";

const sizeOf = (shape: readonly number[]): number => shape.reduce((p, d) => p * d, 1);

/**
 * x [...] summed down to `outShape` (the reverse of broadcasting): shapes line up from the last axis; x's axes missing
 * from the front of outShape, and axes where outShape has 1, are summed. outShape = x's shape is a copy.
 */
export function sumTo64(x: Float64Array, xShape: readonly number[], outShape: readonly number[]): Float64Array {
  const lead = xShape.length - outShape.length;
  if (lead < 0) throw new Error(`sumTo64: [${outShape}] has more axes than [${xShape}]`);
  outShape.forEach((d, i) => {
    if (d !== 1 && d !== xShape[lead + i])
      throw new Error(`sumTo64: [${xShape}] does not broadcast from [${outShape}]`);
  });
  const out = new Float64Array(sizeOf(outShape));
  const idx = new Array<number>(xShape.length).fill(0);
  for (let f = 0; f < x.length; f++) {
    let rest = f;
    for (let k = xShape.length - 1; k >= 0; k--) {
      idx[k] = rest % xShape[k]!;
      rest = Math.floor(rest / xShape[k]!);
    }
    let o = 0;
    for (let k = 0; k < outShape.length; k++) o = o * outShape[k]! + (outShape[k] === 1 ? 0 : idx[lead + k]!);
    out[o]! += x[f]!;
  }
  return out;
}

/** The slice op: `size` entries of `axis` (negative counts from the end) from `start`. pad64's adjoint. */
export function slice64(
  x: Float64Array,
  shape: readonly number[],
  axis: number,
  start: number,
  size: number,
): { shape: number[]; data: Float64Array } {
  const a = axis < 0 ? axis + shape.length : axis;
  const outer = sizeOf(shape.slice(0, a));
  const inner = sizeOf(shape.slice(a + 1));
  const n = shape[a]!;
  if (start < 0 || start + size > n) throw new Error(`slice64: [${start}, ${start + size}) outside an axis of ${n}`);
  const data = new Float64Array(outer * size * inner);
  for (let o = 0; o < outer; o++)
    data.set(x.subarray((o * n + start) * inner, (o * n + start + size) * inner), o * size * inner);
  return { shape: shape.map((d, i) => (i === a ? size : d)), data };
}

/** x with `before` zeros and `after` zeros along `axis` (negative counts from the end): the gradient of a slice. */
export function pad64(
  x: Float64Array,
  shape: readonly number[],
  axis: number,
  before: number,
  after: number,
): { shape: number[]; data: Float64Array } {
  const a = axis < 0 ? axis + shape.length : axis;
  if (a < 0 || a >= shape.length) throw new Error(`pad64: axis ${axis} out of range for rank ${shape.length}`);
  const outer = sizeOf(shape.slice(0, a));
  const inner = sizeOf(shape.slice(a + 1));
  const n = shape[a]!;
  const m = before + n + after;
  const data = new Float64Array(outer * m * inner);
  for (let o = 0; o < outer; o++) data.set(x.subarray(o * n * inner, (o + 1) * n * inner), (o * m + before) * inner);
  return { shape: shape.map((d, i) => (i === a ? m : d)), data };
}

/**
 * The weight gradient of a projection: grad [rows, Out], x [rows, In] (leading axes flattened into rows) →
 * dW [Out, In] with dW[o, i] = Σ_r grad[r, o] · x[r, i].
 */
export function linearWeightGrad64(grad: Float64Array, outF: number, x: Float64Array, inF: number): Float64Array {
  const rows = grad.length / outF;
  if (x.length !== rows * inF)
    throw new Error(`linearWeightGrad64: ${rows} gradient rows but ${x.length / inF} input rows`);
  const out = new Float64Array(outF * inF);
  for (let o = 0; o < outF; o++)
    for (let i = 0; i < inF; i++) {
      let acc = 0;
      for (let r = 0; r < rows; r++) acc += grad[r * outF + o]! * x[r * inF + i]!;
      out[o * inF + i] = acc;
    }
  return out;
}

/**
 * The input gradient of y = softmax(scale · x) over rows of length S, from y: dx = scale · y ⊙ (grad − Σ_row grad ⊙ y).
 * A row with y all 0 (fully masked) gives exactly 0 whatever its grad; otherwise NaN in y or grad propagates by the
 * formula (a NaN in the row's sum makes every entry of the row NaN, 0 · NaN included).
 */
export function softmaxGrad64(y: Float64Array, grad: Float64Array, S: number, scale: number): Float64Array {
  const out = new Float64Array(y.length);
  for (let o = 0; o < y.length; o += S) {
    let masked = true;
    for (let j = 0; j < S; j++) if (y[o + j] !== 0) masked = false;
    if (masked) continue;
    let dot = 0;
    for (let j = 0; j < S; j++) dot += grad[o + j]! * y[o + j]!;
    for (let j = 0; j < S; j++) out[o + j] = scale * y[o + j]! * (grad[o + j]! - dot);
  }
  return out;
}

/** The backward of mask and ALiBi from their output: 0 where `masked` is −∞, scale · grad everywhere else (NaN, +∞ too). */
export function maskGrad64(grad: Float64Array, masked: Float64Array, scale: number): Float64Array {
  return grad.map((g, k) => (masked[k] === -Infinity ? 0 : scale * g));
}

/**
 * The input gradient of layerNorm64 over rows of length E: with x̂ the normalised row, rstd = 1/sqrt(σ² + eps) and
 * ĝ = grad ⊙ weight (weight absent = 1), dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)).
 */
export function layerNormGrad64(
  grad: Float64Array,
  x: Float64Array,
  e: number,
  eps: number,
  weight?: Float64Array,
): Float64Array {
  const { xhat, rstd } = normalizedRows(x, e, eps);
  const out = new Float64Array(x.length);
  for (let o = 0, r = 0; o < x.length; o += e, r++) {
    let mg = 0;
    let mgx = 0;
    for (let j = 0; j < e; j++) {
      const g = grad[o + j]! * (weight ? weight[j]! : 1);
      mg += g;
      mgx += g * xhat[o + j]!;
    }
    mg /= e;
    mgx /= e;
    for (let j = 0; j < e; j++)
      out[o + j] = rstd[r]! * (grad[o + j]! * (weight ? weight[j]! : 1) - mg - xhat[o + j]! * mgx);
  }
  return out;
}

/** The weight (gamma) gradient of layerNorm64: Σ over every row of grad ⊙ x̂ → [E]. */
export function layerNormWeightGrad64(grad: Float64Array, x: Float64Array, e: number, eps: number): Float64Array {
  const { xhat } = normalizedRows(x, e, eps);
  const out = new Float64Array(e);
  for (let o = 0; o < x.length; o += e) for (let j = 0; j < e; j++) out[j]! += grad[o + j]! * xhat[o + j]!;
  return out;
}

/**
 * ReLU's input gradient from its output y, as PyTorch's threshold_backward: 0 where y <= 0 (whatever grad is, NaN
 * included), else grad; a NaN y compares false and lets grad through.
 */
export function reluGrad64(grad: Float64Array, y: Float64Array): Float64Array {
  return y.map((v, i) => (v <= 0 ? 0 : grad[i]!));
}

/**
 * grad · gelu'(x). "none": Φ(x) + x·φ(x) with Φ(x) = ½(1 + erf(x/√2)), φ(x) = exp(−x²/2)/√(2π). "tanh": with
 * k = √(2/π), u = k(x + 0.044715x³), t = tanh u: ½(1 + t) + ½x(1 − t²)·k(1 + 3·0.044715x²).
 */
export function geluGrad64(grad: Float64Array, x: Float64Array, approximate: "none" | "tanh"): Float64Array {
  const k = Math.sqrt(2 / Math.PI);
  return x.map((v, i) => {
    let d: number;
    if (approximate === "tanh") {
      const t = Math.tanh(k * (v + 0.044715 * v * v * v));
      d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * 0.044715 * v * v);
    } else {
      d = 0.5 * (1 + erf64(v / Math.SQRT2)) + (v * Math.exp(-0.5 * v * v)) / Math.sqrt(2 * Math.PI);
    }
    return grad[i]! * d;
  });
}

/**
 * The table gradient of embedding64: zeros [V, E], then out[ids[p], :] += grad[p, :] for every position p (repeated ids
 * accumulate). An id outside [0, V) throws, like embedding64.
 */
export function embeddingGrad64(ids: ArrayLike<number>, grad: Float64Array, v: number, e: number): Float64Array {
  const out = new Float64Array(v * e);
  for (let p = 0; p < ids.length; p++) {
    const id = idAt(ids, p, v);
    for (let j = 0; j < e; j++) out[id * e + j]! += grad[p * e + j]!;
  }
  return out;
}

/**
 * The logits gradient of crossEntropy64: logits [N, V], targets [N]; per position p whose target t is not ignoreIndex,
 * (softmax(logits[p]) − onehot(t)) · g_p with g_p = grad[0] ("sum"), grad[0] / count ("mean", count = positions not
 * ignored; none counted → all 0) or grad[p] ("none"); `grad` absent = 1. Ignored positions get a row of 0. A target
 * outside [0, V) that is not ignoreIndex throws, like crossEntropy64.
 */
export function crossEntropyGrad64(
  logits: Float64Array,
  v: number,
  targets: ArrayLike<number>,
  reduction: "mean" | "sum" | "none",
  ignoreIndex: number | null = null,
  grad?: ArrayLike<number>,
): Float64Array {
  const n = targets.length;
  let count = 0;
  for (let r = 0; r < n; r++) if (targetAt(targets, r, v, ignoreIndex) !== null) count++;
  const out = new Float64Array(n * v);
  for (let r = 0; r < n; r++) {
    const t = targets[r]!;
    if (t === ignoreIndex) continue;
    const g = reduction === "none" ? (grad ? grad[r]! : 1) : (grad ? grad[0]! : 1) / (reduction === "mean" ? count : 1);
    const { max, sum } = rowMaxExpSum(logits, r * v, v);
    for (let j = 0; j < v; j++) out[r * v + j] = (Math.exp(logits[r * v + j]! - max) / sum - (j === t ? 1 : 0)) * g;
  }
  return out;
}
