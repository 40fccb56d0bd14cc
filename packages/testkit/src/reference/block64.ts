// Float64 references for the ops of a transformer block and its loss: layer norm, GELU (both forms), broadcasting add,
// embedding and cross-entropy, plus the mask op's user mask and additive bias. Plain loops over dense row-major
// Float64Arrays, written from the op docs (packages/graph/src/ops) and PyTorch's definitions, never from an executor.
import { AttnGraphError, describe } from "@attngraph/tensor";
import { mask64, type Mask64 } from "./ops64.js";

/** nn.LayerNorm over rows of length E: (x − mean) / sqrt(var + eps) · weight + bias, biased variance, two-pass. */
export function layerNorm64(
  x: Float64Array,
  e: number,
  eps: number,
  weight?: Float64Array,
  bias?: Float64Array,
): Float64Array {
  const { xhat } = normalizedRows(x, e, eps);
  return xhat.map((h, i) => h * (weight ? weight[i % e]! : 1) + (bias ? bias[i % e]! : 0));
}

/**
 * Per row of length E: x̂ = (x − mean) · rstd with rstd = 1/sqrt(biased variance + eps), two-pass. layerNorm64 and its
 * gradients (backward64) normalise the same way.
 */
export function normalizedRows(x: Float64Array, e: number, eps: number): { xhat: Float64Array; rstd: Float64Array } {
  const xhat = new Float64Array(x.length);
  const rstd = new Float64Array(x.length / e);
  for (let o = 0, r = 0; o < x.length; o += e, r++) {
    let mean = 0;
    for (let j = 0; j < e; j++) mean += x[o + j]!;
    mean /= e;
    let v = 0;
    for (let j = 0; j < e; j++) v += (x[o + j]! - mean) ** 2;
    const inv = 1 / Math.sqrt(v / e + eps);
    rstd[r] = inv;
    for (let j = 0; j < e; j++) xhat[o + j] = (x[o + j]! - mean) * inv;
  }
  return { xhat, rstd };
}

/**
 * erf in float64 to about 1e-15: the Maclaurin series for |x| < 2.5 (its terms stay below e^6.25, so little is lost to
 * cancellation) and the continued fraction of erfc beyond (Abramowitz & Stegun 7.1.14, evaluated from the tail).
 */
export function erf64(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a < 2.5) {
    let term = x;
    let sum = x;
    for (let n = 1; n < 200; n++) {
      term *= (-x * x) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return (2 / Math.sqrt(Math.PI)) * sum;
  }
  if (a > 6) return Math.sign(x); // erfc(6) ≈ 2e-17
  // erfc(a) = exp(−a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + …)))))
  let f = a;
  for (let k = 80; k >= 1; k--) f = a + k / 2 / f;
  const erfc = Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

/** GELU: "none" = x/2 · (1 + erf(x/√2)); "tanh" = x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))). */
export function gelu64(x: Float64Array, approximate: "none" | "tanh"): Float64Array {
  const c = Math.sqrt(2 / Math.PI);
  return x.map((v) =>
    approximate === "tanh"
      ? 0.5 * v * (1 + Math.tanh(c * (v + 0.044715 * v * v * v)))
      : 0.5 * v * (1 + erf64(v / Math.SQRT2)),
  );
}

/** ReLU: max(x, 0), NaN kept (JavaScript's Math.max propagates NaN, as torch.relu does); −0 gives +0. */
export function relu64(x: Float64Array): Float64Array {
  return x.map((v) => Math.max(v, 0));
}

/** a + b with NumPy broadcasting; returns the broadcast shape and values. Shapes must broadcast. */
export function add64(
  a: Float64Array,
  aShape: readonly number[],
  b: Float64Array,
  bShape: readonly number[],
): { shape: number[]; data: Float64Array } {
  return broadcast64(a, aShape, b, bShape, (p, q) => p + q, "add64");
}

/** f(a, b) elementwise over NumPy's broadcast of the two shapes (add64's and mul64's shared walk). */
export function broadcast64(
  a: Float64Array,
  aShape: readonly number[],
  b: Float64Array,
  bShape: readonly number[],
  f: (p: number, q: number) => number,
  what: string,
): { shape: number[]; data: Float64Array } {
  const n = Math.max(aShape.length, bShape.length);
  const pad = (s: readonly number[]) => [...new Array<number>(n - s.length).fill(1), ...s];
  const as = pad(aShape);
  const bs = pad(bShape);
  const shape = as.map((d, i) => {
    const e = bs[i]!;
    if (d !== e && d !== 1 && e !== 1) throw new Error(`${what}: shapes [${aShape}] and [${bShape}] do not broadcast`);
    return d === 1 ? e : d;
  });
  const size = shape.reduce((p, d) => p * d, 1);
  const data = new Float64Array(size);
  const at = (s: number[], idx: number[]) => idx.reduce((p, i, k) => p * s[k]! + (s[k] === 1 ? 0 : i), 0);
  for (let k0 = 0; k0 < size; k0++) {
    const idx: number[] = [];
    let r = k0;
    for (let k = n - 1; k >= 0; k--) {
      idx.unshift(r % shape[k]!);
      r = Math.floor(r / shape[k]!);
    }
    data[k0] = f(a[at(as, idx)]!, b[at(bs, idx)]!);
  }
  return { shape, data };
}

/** ids[k], which must be an integer in [0, V): the embedding references' id check. */
export function idAt(ids: ArrayLike<number>, k: number, v: number): number {
  const id = ids[k]!;
  if (!Number.isInteger(id) || id < 0 || id >= v)
    throw new AttnGraphError("input", describe(`ids[${k}]`, "id out of range", `[0, ${v})`, String(id)));
  return id;
}

/** Rows of table [V, E] by id; an id outside [0, V) throws (the executors' error names the node instead). */
export function embedding64(ids: ArrayLike<number>, table: Float64Array, v: number, e: number): Float64Array {
  const out = new Float64Array(ids.length * e);
  for (let k = 0; k < ids.length; k++) {
    const id = idAt(ids, k, v);
    for (let j = 0; j < e; j++) out[k * e + j] = table[id * e + j]!;
  }
  return out;
}

/**
 * targets[r] checked as a class id of V classes: null where it is ignoreIndex (the row is skipped), otherwise an
 * integer in [0, V) or an AttnGraphError naming targets[r]. The cross-entropy references' target check.
 */
export function targetAt(targets: ArrayLike<number>, r: number, v: number, ignoreIndex: number | null): number | null {
  const t = targets[r]!;
  if (t === ignoreIndex) return null;
  if (!Number.isInteger(t) || t < 0 || t >= v)
    throw new AttnGraphError("input", describe(`targets[${r}]`, "target out of range", `[0, ${v})`, String(t)));
  return t;
}

/** The max of row logits[o, o + V) and Σ exp(logit − max) over it: the stable logsumexp / softmax of one row. */
export function rowMaxExpSum(logits: Float64Array, o: number, v: number): { max: number; sum: number } {
  let max = -Infinity;
  for (let j = 0; j < v; j++) max = Math.max(max, logits[o + j]!);
  let sum = 0;
  for (let j = 0; j < v; j++) sum += Math.exp(logits[o + j]! - max);
  return { max, sum };
}

/**
 * F.cross_entropy of logits [N, V] against targets [N]: per row logsumexp − logits[target]; `ignoreIndex` rows give 0
 * and are not counted. "mean" over counted rows (0 when none is counted, where PyTorch gives nan), "sum", or "none".
 */
export function crossEntropy64(
  logits: Float64Array,
  v: number,
  targets: ArrayLike<number>,
  reduction: "mean" | "sum" | "none",
  ignoreIndex: number | null = null,
): Float64Array {
  const n = targets.length;
  const per = new Float64Array(n);
  let count = 0;
  for (let r = 0; r < n; r++) {
    const t = targetAt(targets, r, v, ignoreIndex);
    if (t === null) continue;
    const { max, sum } = rowMaxExpSum(logits, r * v, v);
    per[r] = Math.log(sum) + max - logits[r * v + t]!;
    count++;
  }
  if (reduction === "none") return per;
  const total = per.reduce((a, x) => a + x, 0);
  return Float64Array.of(reduction === "sum" ? total : count === 0 ? 0 : total / count);
}

/** A user mask or bias input of the mask op, dense, with its shape ([L, S], [B, L, S] or [B, H, L, S]; dims of 1 broadcast). */
export interface UserMask64 {
  readonly shape: readonly number[];
  readonly data: Float64Array;
}

/** The element of a user mask/bias for scores index (b, h, i, j), broadcasting dims of 1. */
function userAt(m: UserMask64, b: number, h: number, i: number, j: number): number {
  const full =
    m.shape.length === 2
      ? [1, 1, ...m.shape]
      : m.shape.length === 3
        ? [m.shape[0]!, 1, m.shape[1]!, m.shape[2]!]
        : [...m.shape];
  const idx = [b, h, i, j].map((x, k) => (full[k] === 1 ? 0 : x));
  return m.data[((idx[0]! * full[1]! + idx[1]!) * full[2]! + idx[2]!) * full[3]! + idx[3]!]!;
}

/**
 * The mask op with every input: positions hidden by causal/window/padding (mask64) or by a user mask value of 0 become
 * −∞; visible ones become scale · score + bias. User mask values other than 0 and 1 throw.
 */
export function maskFull64(
  scores: Float64Array,
  B: number,
  H: number,
  L: number,
  S: number,
  m: Mask64 & { readonly scale?: number },
  pad?: Float64Array,
  user?: UserMask64,
  bias?: UserMask64,
): Float64Array {
  const out = mask64(scores, B, H, L, S, m, pad);
  const scale = m.scale ?? 1;
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++)
        for (let j = 0; j < S; j++) {
          const o = ((b * H + h) * L + i) * S + j;
          const keep = user ? userAt(user, b, h, i, j) : 1;
          if (keep !== 0 && keep !== 1)
            throw new AttnGraphError(
              "input",
              describe("mask", "user mask values must be 0 or 1", "0 or 1", String(keep)),
            );
          if (out[o] === -Infinity || keep === 0) out[o] = -Infinity;
          else out[o] = scale * out[o]! + (bias ? userAt(bias, b, h, i, j) : 0);
        }
  return out;
}
