// What the backward tests (backward.test.ts, backward-rows.test.ts) share: closeness by compare(), the layouts each
// input is tried in, and float64 loop references written from the op declarations.
import { expect } from "vitest";
import { compare, type AnyTensor, type Tensor } from "@attngraph/tensor";
import type { GpuTensor } from "./gpu-tensor.js";
import type { GpuOps } from "./test-gpu.js";
import { broadcastIndex, erfc64, unravel } from "./test-reference64.js";

export const TOL = { abs: 1e-5, rel: 1e-5 };
export const values = (t: AnyTensor): number[] =>
  Array.from(t.dtype === "int32" ? t.toInt32Array() : t.toFloat32Array());
export const sizeOf = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

export function expectClose(got: Tensor, want: readonly number[], label: string, tol = TOL): void {
  const r = compare(got, want, tol, { equalNan: true });
  expect({ label, ok: r.ok, worst: r.worst, failures: r.failures }).toMatchObject({ ok: true });
}

/** The dense input and two GPU views with its values: transposed (by `perm`) and spaced (offset, doubled strides). */
export async function layouts(
  ops: GpuOps,
  t: Tensor,
  perm: readonly number[],
): Promise<[string, Tensor | GpuTensor][]> {
  return [
    ["dense", t],
    [`permuted ${perm.join("")}`, await ops.permuted(t, perm)],
    ["spaced", await ops.spaced(t)],
  ];
}

// ---- float64 references ----

export function sumTo64(x: readonly number[], xs: readonly number[], out: readonly number[]): number[] {
  const y = new Array<number>(sizeOf(out)).fill(0);
  x.forEach((v, f) => (y[broadcastIndex(unravel(f, xs), out)]! += v));
  return y;
}

export function pad64(
  x: readonly number[],
  xs: readonly number[],
  axis: number,
  before: number,
  after: number,
): number[] {
  const a = axis < 0 ? axis + xs.length : axis;
  const os = xs.map((d, i) => (i === a ? before + d + after : d));
  return Array.from({ length: sizeOf(os) }, (_, f) => {
    const idx = unravel(f, os);
    if (idx[a]! < before || idx[a]! >= before + xs[a]!) return 0;
    idx[a]! -= before;
    return x[idx.reduce((flat, k, i) => flat * xs[i]! + k, 0)]!;
  });
}

export function linearWeightGrad64(g: readonly number[], x: readonly number[], nOut: number, nIn: number): number[] {
  const rows = g.length / nOut;
  const out = new Array<number>(nOut * nIn).fill(0);
  for (let r = 0; r < rows; r++)
    for (let o = 0; o < nOut; o++)
      for (let i = 0; i < nIn; i++) out[o * nIn + i]! += g[r * nOut + o]! * x[r * nIn + i]!;
  return out;
}

export function softmaxGrad64(y: readonly number[], g: readonly number[], s: number, scale: number): number[] {
  const out: number[] = [];
  for (let o = 0; o < y.length; o += s) {
    let dot = 0;
    for (let j = 0; j < s; j++) dot += y[o + j]! * g[o + j]!;
    for (let j = 0; j < s; j++) out.push(scale * y[o + j]! * (g[o + j]! - dot));
  }
  return out;
}

/** Per row: x̂ and rstd from the two-pass mean and biased variance. */
export function normRows(x: readonly number[], e: number, eps: number): { xh: number[]; rstd: number[] } {
  const xh: number[] = [];
  const rstd: number[] = [];
  for (let o = 0; o < x.length; o += e) {
    const row = x.slice(o, o + e);
    const mean = row.reduce((a, v) => a + v, 0) / e;
    const r = 1 / Math.sqrt(row.reduce((a, v) => a + (v - mean) ** 2, 0) / e + eps);
    rstd.push(r);
    for (const v of row) xh.push((v - mean) * r);
  }
  return { xh, rstd };
}

export function layerNormGrad64(
  g: readonly number[],
  x: readonly number[],
  e: number,
  eps: number,
  w?: readonly number[],
): number[] {
  const { xh, rstd } = normRows(x, e, eps);
  const out: number[] = [];
  for (let o = 0, row = 0; o < x.length; o += e, row++) {
    const gh = Array.from({ length: e }, (_, j) => g[o + j]! * (w ? w[j]! : 1));
    const mg = gh.reduce((a, v) => a + v, 0) / e;
    const mgx = gh.reduce((a, v, j) => a + v * xh[o + j]!, 0) / e;
    for (let j = 0; j < e; j++) out.push(rstd[row]! * (gh[j]! - mg - xh[o + j]! * mgx));
  }
  return out;
}

export function layerNormWeightGrad64(g: readonly number[], x: readonly number[], e: number, eps: number): number[] {
  const { xh } = normRows(x, e, eps);
  const out = new Array<number>(e).fill(0);
  g.forEach((v, k) => (out[k % e]! += v * xh[k]!));
  return out;
}

export function geluGrad64(x: number, approximate: "none" | "tanh"): number {
  if (approximate === "tanh") {
    const k = Math.sqrt(2 / Math.PI);
    const t = Math.tanh(k * (x + 0.044715 * x ** 3));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
  }
  return 0.5 * erfc64(-x / Math.SQRT2) + (x * Math.exp((-x * x) / 2)) / Math.sqrt(2 * Math.PI);
}

export function embeddingGrad64(ids: readonly number[], g: readonly number[], v: number, e: number): number[] {
  const out = new Array<number>(v * e).fill(0);
  ids.forEach((id, p) => {
    for (let j = 0; j < e; j++) out[id * e + j]! += g[p * e + j]!;
  });
  return out;
}

export function crossEntropyGrad64(
  logits: readonly number[],
  v: number,
  t: readonly number[],
  reduction: "mean" | "sum" | "none",
  ignoreIndex: number | null,
  grad?: readonly number[],
): number[] {
  const count = t.filter((c) => c !== ignoreIndex).length;
  return t.flatMap((c, p) => {
    if (c === ignoreIndex) return new Array<number>(v).fill(0);
    const row = logits.slice(p * v, p * v + v);
    const max = Math.max(...row);
    const sum = row.reduce((a, x) => a + Math.exp(x - max), 0);
    const g = reduction === "none" ? (grad ? grad[p]! : 1) : (grad ? grad[0]! : 1) / (reduction === "mean" ? count : 1);
    return row.map((x, j) => (Math.exp(x - max) / sum - (j === c ? 1 : 0)) * g);
  });
}

export function rope64(
  x: readonly number[],
  shape: readonly number[],
  base: number,
  r: number,
  positionOffset: number,
  inverse: boolean,
): number[] {
  const [, , nl, nd] = shape as [number, number, number, number];
  const half = r / 2;
  return x.map((_, f) => {
    const d = f % nd;
    const l = Math.floor(f / nd) % nl;
    if (d >= r) return x[f]!;
    const i = d < half ? d : d - half;
    const theta = (inverse ? -1 : 1) * (positionOffset + l) * base ** ((-2 * i) / r);
    const x1 = x[f - d + i]!;
    const x2 = x[f - d + i + half]!;
    return d < half ? x1 * Math.cos(theta) - x2 * Math.sin(theta) : x2 * Math.cos(theta) + x1 * Math.sin(theta);
  });
}

// ---- the kernels ----
