// The backward kernels (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, layer-norm-grad,
// layer-norm-weight-grad, gelu-grad, relu-grad, embedding-grad, cross-entropy-grad) and rope's `inverse`, each against a float64
// loop reference written here from the op declarations (packages/graph/src/ops): dense, transposed and spaced (offset,
// doubled strides, junk between) inputs, shapes past one workgroup or tile, the special values each op promises
// (fully masked softmax rows exactly 0, −∞ in mask-grad, NaN propagating), repeated ids, and the errors, which for bad
// ids and targets are those of the forward embedding and cross-entropy kernels.
import { pointwiseGrad, reluOp, type Expr } from "@attngraph/graph";
import { afterAll, describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, compare, type AnyTensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";
import { broadcastIndex, erfc64, unravel } from "./test-reference64.js";

/** relu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, relu's input in x1). */
const RELU_GRAD = { expr: (pointwiseGrad(reluOp.pointwise!({}), 0) as { expr: Expr }).expr };

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const TOL = { abs: 1e-5, rel: 1e-5 };
const values = (t: AnyTensor): number[] => Array.from(t.dtype === "int32" ? t.toInt32Array() : t.toFloat32Array());
const sizeOf = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

function expectClose(got: Tensor, want: readonly number[], label: string, tol = TOL): void {
  const r = compare(got, want, tol, { equalNan: true });
  expect({ label, ok: r.ok, worst: r.worst, failures: r.failures }).toMatchObject({ ok: true });
}

/** The dense input and two GPU views with its values: transposed (by `perm`) and spaced (offset, doubled strides). */
async function layouts(t: Tensor, perm: readonly number[]): Promise<[string, Tensor | GpuTensor][]> {
  return [
    ["dense", t],
    [`permuted ${perm.join("")}`, await ops.permuted(t, perm)],
    ["spaced", await ops.spaced(t)],
  ];
}

// ---- float64 references ----

function sumTo64(x: readonly number[], xs: readonly number[], out: readonly number[]): number[] {
  const y = new Array<number>(sizeOf(out)).fill(0);
  x.forEach((v, f) => (y[broadcastIndex(unravel(f, xs), out)]! += v));
  return y;
}

function pad64(x: readonly number[], xs: readonly number[], axis: number, before: number, after: number): number[] {
  const a = axis < 0 ? axis + xs.length : axis;
  const os = xs.map((d, i) => (i === a ? before + d + after : d));
  return Array.from({ length: sizeOf(os) }, (_, f) => {
    const idx = unravel(f, os);
    if (idx[a]! < before || idx[a]! >= before + xs[a]!) return 0;
    idx[a]! -= before;
    return x[idx.reduce((flat, k, i) => flat * xs[i]! + k, 0)]!;
  });
}

function linearWeightGrad64(g: readonly number[], x: readonly number[], nOut: number, nIn: number): number[] {
  const rows = g.length / nOut;
  const out = new Array<number>(nOut * nIn).fill(0);
  for (let r = 0; r < rows; r++) for (let o = 0; o < nOut; o++) for (let i = 0; i < nIn; i++) out[o * nIn + i]! += g[r * nOut + o]! * x[r * nIn + i]!;
  return out;
}

function softmaxGrad64(y: readonly number[], g: readonly number[], s: number, scale: number): number[] {
  const out: number[] = [];
  for (let o = 0; o < y.length; o += s) {
    let dot = 0;
    for (let j = 0; j < s; j++) dot += y[o + j]! * g[o + j]!;
    for (let j = 0; j < s; j++) out.push(scale * y[o + j]! * (g[o + j]! - dot));
  }
  return out;
}

/** Per row: x̂ and rstd from the two-pass mean and biased variance. */
function normRows(x: readonly number[], e: number, eps: number): { xh: number[]; rstd: number[] } {
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

function layerNormGrad64(g: readonly number[], x: readonly number[], e: number, eps: number, w?: readonly number[]): number[] {
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

function layerNormWeightGrad64(g: readonly number[], x: readonly number[], e: number, eps: number): number[] {
  const { xh } = normRows(x, e, eps);
  const out = new Array<number>(e).fill(0);
  g.forEach((v, k) => (out[k % e]! += v * xh[k]!));
  return out;
}

function geluGrad64(x: number, approximate: "none" | "tanh"): number {
  if (approximate === "tanh") {
    const k = Math.sqrt(2 / Math.PI);
    const t = Math.tanh(k * (x + 0.044715 * x ** 3));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
  }
  return 0.5 * erfc64(-x / Math.SQRT2) + (x * Math.exp((-x * x) / 2)) / Math.sqrt(2 * Math.PI);
}

function embeddingGrad64(ids: readonly number[], g: readonly number[], v: number, e: number): number[] {
  const out = new Array<number>(v * e).fill(0);
  ids.forEach((id, p) => {
    for (let j = 0; j < e; j++) out[id * e + j]! += g[p * e + j]!;
  });
  return out;
}

function crossEntropyGrad64(logits: readonly number[], v: number, t: readonly number[], reduction: "mean" | "sum" | "none", ignoreIndex: number | null, grad?: readonly number[]): number[] {
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

function rope64(x: readonly number[], shape: readonly number[], base: number, r: number, positionOffset: number, inverse: boolean): number[] {
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

describe("sum-to", () => {
  const x = randomTensor([2, 3, 4], 1, 2);
  const cases: [string, number[]][] = [
    ["leading axes (a bias gradient)", [4]],
    ["a leading axis to 1", [1, 3, 4]],
    ["a middle axis to 1", [2, 1, 4]],
    ["the last axis to 1, one leading axis dropped", [3, 1]],
    ["everything to a scalar", []],
    ["everything to [1, 1, 1]", [1, 1, 1]],
    ["nothing (a copy)", [2, 3, 4]],
  ];
  for (const [label, out] of cases) {
    it(`${label}: [2, 3, 4] → [${out.join(", ")}], dense and strided`, async () => {
      for (const [layout, input] of await layouts(x, [2, 0, 1])) {
        const got = await ops.run("sum-to", { shape: out }, [input], out);
        expect(got.shape).toEqual(out);
        expectClose(got, sumTo64(values(x), x.shape, out), `${label} ${layout}`);
      }
    });
  }

  it("GQA head groups [B, Hkv, g, S, D] → [B, Hkv, 1, S, D]; x with an axis of 1 kept", async () => {
    const q = randomTensor([2, 2, 3, 4, 5], 2);
    expectClose(await ops.run("sum-to", { shape: [2, 2, 1, 4, 5] }, [q], [2, 2, 1, 4, 5]), sumTo64(values(q), q.shape, [2, 2, 1, 4, 5]), "gqa");
    const y = randomTensor([3, 1, 4], 3);
    expectClose(await ops.run("sum-to", { shape: [1, 4] }, [y], [1, 4]), sumTo64(values(y), y.shape, [1, 4]), "kept 1");
  });

  it("many terms per output (one workgroup each): [300, 7] → [7] and a strided [5, 80, 6] → [1, 6]", async () => {
    const a = randomTensor([300, 7], 4);
    expectClose(await ops.run("sum-to", { shape: [7] }, [a], [7]), sumTo64(values(a), a.shape, [7]), "[300, 7]");
    const b = randomTensor([5, 80, 6], 5);
    for (const [layout, input] of await layouts(b, [2, 1, 0])) {
      expectClose(await ops.run("sum-to", { shape: [1, 6] }, [input], [1, 6]), sumTo64(values(b), b.shape, [1, 6]), `[5, 80, 6] ${layout}`);
    }
  });

  it("an empty summed axis gives zeros; a shape x does not broadcast from is an error", async () => {
    expect(values(await ops.run("sum-to", { shape: [3] }, [Tensor.from([], [0, 3])], [3]))).toEqual([0, 0, 0]);
    await expect(ops.error("sum-to", { shape: [5] }, [x], [5], "db")).resolves.toMatchObject({ code: "shape", subject: "db.shape" });
    await expect(ops.error("sum-to", { shape: [1, 2, 3, 4] }, [x], [1, 2, 3, 4], "db")).resolves.toMatchObject({ code: "shape", subject: "db.shape" });
  });
});

describe("pad", () => {
  const x = randomTensor([2, 3, 4], 10);
  for (const [axis, before, after] of [[-1, 2, 1], [0, 1, 0], [1, 0, 3], [-2, 2, 2], [2, 0, 0]] as const) {
    it(`axis ${axis}, before ${before}, after ${after}: dense and strided`, async () => {
      const want = pad64(values(x), x.shape, axis, before, after);
      const a = axis < 0 ? axis + 3 : axis;
      const out = x.shape.map((d, i) => (i === a ? before + d + after : d));
      for (const [layout, input] of await layouts(x, [1, 2, 0])) {
        const got = await ops.run("pad", { axis, before, after }, [input], out);
        expect(got.shape).toEqual(out);
        expect({ layout, v: values(got) }).toEqual({ layout, v: want.map((v) => Math.fround(v)) });
      }
    });
  }

  it("errors: an axis out of range, a negative count", async () => {
    await expect(ops.error("pad", { axis: 3, before: 1, after: 0 }, [x], [2, 3, 5], "p")).resolves.toMatchObject({ code: "attr", subject: "p.axis" });
    await expect(ops.error("pad", { axis: -4, before: 1, after: 0 }, [x], [2, 3, 5], "p")).resolves.toMatchObject({ code: "attr", subject: "p.axis" });
    await expect(ops.error("pad", { axis: 0, before: -1, after: 0 }, [x], [1, 3, 4], "p")).resolves.toMatchObject({ code: "attr", subject: "p.before" });
  });
});

describe("linear-weight-grad", () => {
  it("[2, 3, Out] and [2, 3, In]: dense, transposed (row stride only), non-collapsing leading axes (copied), spaced", async () => {
    const g = randomTensor([2, 3, 5], 20);
    const x = randomTensor([2, 3, 4], 21);
    const want = linearWeightGrad64(values(g), values(x), 5, 4);
    const variants: [string, Tensor | GpuTensor, Tensor | GpuTensor][] = [
      ["dense", g, x],
      ["last axis strided", await ops.permuted(g, [2, 0, 1]), await ops.permuted(x, [2, 0, 1])],
      ["leading axes swapped", await ops.permuted(g, [1, 0, 2]), await ops.permuted(x, [1, 0, 2])],
      ["spaced", await ops.spaced(g), await ops.spaced(x)],
      ["mixed", g, await ops.permuted(x, [1, 2, 0])],
    ];
    for (const [label, gi, xi] of variants) expectClose(await ops.run("linear-weight-grad", {}, [gi, xi], [5, 4]), want, label);
  });

  it("past one tile on every axis: rows 150, Out 70, In 65; and rank-1 inputs (one row)", async () => {
    const g = randomTensor([3, 50, 70], 22);
    const x = randomTensor([3, 50, 65], 23);
    expectClose(await ops.run("linear-weight-grad", {}, [g, x], [70, 65]), linearWeightGrad64(values(g), values(x), 70, 65), "150 rows", { abs: 1e-5, rel: 1e-4 });
    const gt = await ops.permuted(g, [2, 0, 1]);
    expectClose(await ops.run("linear-weight-grad", {}, [gt, x], [70, 65]), linearWeightGrad64(values(g), values(x), 70, 65), "150 rows, grad strided", { abs: 1e-5, rel: 1e-4 });
    const g1 = randomTensor([3], 24);
    const x1 = randomTensor([2], 25);
    expectClose(await ops.run("linear-weight-grad", {}, [g1, x1], [3, 2]), linearWeightGrad64(values(g1), values(x1), 3, 2), "rank 1");
  });

  it("zero rows give zeros; mismatched leading axes are an error", async () => {
    expect(values(await ops.run("linear-weight-grad", {}, [Tensor.from([], [0, 2]), Tensor.from([], [0, 3])], [2, 3]))).toEqual([0, 0, 0, 0, 0, 0]);
    await expect(ops.error("linear-weight-grad", {}, [randomTensor([2, 3, 5], 1), randomTensor([3, 2, 4], 2)], [5, 4], "dw")).resolves.toMatchObject({ code: "shape", subject: "dw.x" });
    await expect(ops.error("linear-weight-grad", {}, [randomTensor([2, 3, 5], 1), randomTensor([6, 4], 2)], [5, 4], "dw")).resolves.toMatchObject({ code: "shape", subject: "dw.x" });
  });
});

describe("softmax-grad", () => {
  /** Rows of a softmax (positive, summing to 1) with some entries exactly 0 (masked keys). */
  function softmaxRows(shape: number[], seed: number): Tensor {
    const s = shape[shape.length - 1]!;
    const raw = values(randomTensor(shape, seed, 3));
    const out: number[] = [];
    for (let o = 0; o < raw.length; o += s) {
      const e = raw.slice(o, o + s).map((v, j) => ((o / s + j) % 4 === 3 ? 0 : Math.exp(v)));
      const sum = e.reduce((a, v) => a + v, 0);
      out.push(...e.map((v) => v / sum));
    }
    return Tensor.from(out, shape);
  }

  for (const [label, shape] of [["[2, 3, 5]", [2, 3, 5]], ["[2, 2, 3, 150] (past one workgroup)", [2, 2, 3, 150]]] as const) {
    it(`${label}, scale 0.5: dense and strided`, async () => {
      const y = softmaxRows([...shape], 30);
      const g = randomTensor([...shape], 31);
      const want = softmaxGrad64(values(y), values(g), shape[shape.length - 1]!, 0.5);
      const perm = shape.length === 3 ? [2, 0, 1] : [3, 1, 0, 2];
      const ys = await layouts(y, perm);
      const gs = await layouts(g, perm);
      for (let k = 0; k < ys.length; k++) {
        expectClose(await ops.run("softmax-grad", { scale: 0.5 }, [ys[k]![1], gs[(k + 1) % gs.length]![1]], [...shape]), want, `${ys[k]![0]} y`);
      }
    });
  }

  it("a fully masked row (y all 0) gives exactly +0, whatever grad; NaN in y or grad propagates to its row", async () => {
    const y = Tensor.from([0, 0, 0, 0, 0.25, 0.75, 0, 0], [2, 4]);
    const g = Tensor.from([-3, 5, -1e30, 2, 1, -2, 3, 4], [2, 4]);
    const got = values(await ops.run("softmax-grad", { scale: 2 }, [y, g], [2, 4]));
    expect(got.slice(0, 4).every((v) => Object.is(v, 0)), String(got)).toBe(true);
    expectClose(Tensor.from(got, [2, 4]), softmaxGrad64(values(y), values(g), 4, 2), "masked row");
    const yn = Tensor.from([0.5, Number.NaN, 0.5, 0, 0.5, 0.5], [2, 3]);
    const gn = Tensor.from([1, 2, 3, 1, Number.NaN, 2], [2, 3]);
    const nan = values(await ops.run("softmax-grad", { scale: 1 }, [yn, gn], [2, 3]));
    expect(nan.map((v) => Number.isNaN(v))).toEqual([true, true, true, true, true, true]);
  });

  it("errors: shapes that differ, a non-finite scale", async () => {
    await expect(ops.error("softmax-grad", { scale: 1 }, [randomTensor([2, 3], 1), randomTensor([3, 2], 1)], [2, 3], "sg")).resolves.toMatchObject({ code: "shape", subject: "sg.grad" });
    await expect(ops.error("softmax-grad", { scale: Number.NaN }, [randomTensor([2, 3], 1), randomTensor([2, 3], 1)], [2, 3], "sg")).resolves.toMatchObject({ code: "attr", subject: "sg.scale" });
  });
});

describe("mask-grad", () => {
  it("0 where masked is −∞, scale · grad elsewhere (a NaN or +∞ in masked included): dense and strided", async () => {
    const m = values(randomTensor([2, 3, 4], 40));
    const special = m.map((v, k) => (k % 5 === 0 ? -Infinity : k === 7 ? Number.NaN : k === 8 ? Infinity : v));
    const masked = Tensor.from(special, [2, 3, 4]);
    const g = randomTensor([2, 3, 4], 41);
    const want = special.map((v, k) => (v === -Infinity ? 0 : 0.25 * values(g)[k]!));
    const ms = await layouts(masked, [2, 1, 0]);
    const gs = await layouts(g, [1, 2, 0]);
    for (let k = 0; k < ms.length; k++) {
      const got = values(await ops.run("mask-grad", { scale: 0.25 }, [gs[k]![1], ms[(k + 2) % 3]![1]], [2, 3, 4]));
      expect(got, `${gs[k]![0]} grad`).toEqual(want.map((v) => Math.fround(v)));
      got.forEach((v, i) => special[i] === -Infinity && expect(Object.is(v, 0)).toBe(true));
    }
  });

  it("errors: shapes that differ", async () => {
    await expect(ops.error("mask-grad", { scale: 1 }, [randomTensor([2, 3], 1), randomTensor([2, 4], 1)], [2, 3], "mg")).resolves.toMatchObject({ code: "shape", subject: "mg.masked" });
  });
});

describe("layer-norm-grad and layer-norm-weight-grad", () => {
  for (const [label, shape] of [["[2, 3, 8]", [2, 3, 8]], ["[3, 200] (past one workgroup)", [3, 200]]] as const) {
    it(`${label}: dx with and without weight, dW, dense and strided`, async () => {
      const e = shape[shape.length - 1]!;
      // Rows far from 0, so the statistics' shift matters.
      const x = Tensor.from(values(randomTensor([...shape], 50, 2)).map((v) => v + 30), [...shape]);
      const g = randomTensor([...shape], 51);
      const w = randomTensor([e], 52, 1.5);
      const perm = shape.length === 3 ? [2, 0, 1] : [1, 0];
      const xs = await layouts(x, perm);
      const gs = await layouts(g, perm);
      const tol = { abs: 1e-4, rel: 1e-4 };
      for (let k = 0; k < xs.length; k++) {
        const [lx, xi] = xs[k]!;
        const gi = gs[(k + 1) % 3]![1];
        expectClose(await ops.run("layer-norm-grad", { eps: 1e-5 }, [gi, xi, w], [...shape]), layerNormGrad64(values(g), values(x), e, 1e-5, values(w)), `dx weight ${lx}`, tol);
        expectClose(await ops.run("layer-norm-grad", { eps: 1e-3 }, [gi, xi], [...shape]), layerNormGrad64(values(g), values(x), e, 1e-3), `dx ${lx}`, tol);
        expectClose(await ops.run("layer-norm-weight-grad", { eps: 1e-5 }, [gi, xi], [e]), layerNormWeightGrad64(values(g), values(x), e, 1e-5), `dW ${lx}`, tol);
      }
    });
  }

  it("dW over many rows ([300, 6]); a strided weight; a constant row gives dx = 0 without NaN", async () => {
    const x = randomTensor([300, 6], 53);
    const g = randomTensor([300, 6], 54);
    expectClose(await ops.run("layer-norm-weight-grad", { eps: 1e-5 }, [g, x], [6]), layerNormWeightGrad64(values(g), values(x), 6, 1e-5), "300 rows", { abs: 1e-4, rel: 1e-4 });
    const w = randomTensor([6], 55);
    const xc = Tensor.from([...new Array<number>(6).fill(3), ...values(randomTensor([6], 56))], [2, 6]);
    const gc = randomTensor([2, 6], 57);
    const got = await ops.run("layer-norm-grad", { eps: 1e-5 }, [gc, xc, await ops.spaced(w)], [2, 6]);
    expectClose(got, layerNormGrad64(values(gc), values(xc), 6, 1e-5, values(w)), "constant row", { abs: 1e-3, rel: 1e-4 });
  });

  it("errors: shapes that differ, a weight of the wrong length, eps <= 0", async () => {
    const x = randomTensor([2, 4], 1);
    await expect(ops.error("layer-norm-grad", { eps: 1e-5 }, [randomTensor([2, 3], 1), x], [2, 4], "ln")).resolves.toMatchObject({ code: "shape", subject: "ln.x" });
    await expect(ops.error("layer-norm-grad", { eps: 1e-5 }, [x, x, randomTensor([3], 1)], [2, 4], "ln")).resolves.toMatchObject({ code: "shape", subject: "ln.weight" });
    await expect(ops.error("layer-norm-weight-grad", { eps: 0 }, [x, x], [4], "ln")).resolves.toMatchObject({ code: "attr", subject: "ln.eps" });
  });
});

describe("relu's derived gradient (the pointwise kernel)", () => {
  it("grad where y > 0 or NaN, exactly 0 where y <= 0 (a NaN or infinite grad there included); strided", async () => {
    const y = Tensor.from([0, -0, Number.NaN, Infinity, 1e-30, 2.5, 0, 3, 0, 7], [10]);
    const g = Tensor.from([1.5, -2, 3, -4, 5, -6, Number.NaN, Number.NaN, Infinity, 8], [10]);
    const got = values(await ops.run("pointwise", RELU_GRAD, [g, y], y.shape));
    expect(got).toEqual([0, 0, 3, -4, 5, -6, 0, Number.NaN, 0, 8]);
    expect(got.slice(0, 2).map((v) => Object.is(v, 0))).toEqual([true, true]);
    const y2 = Tensor.from(values(randomTensor([5, 6], 63, 3)).map((v) => Math.max(v, 0)), [5, 6]);
    const g2 = randomTensor([5, 6], 64);
    const want2 = values(y2).map((v, k) => (v <= 0 ? 0 : values(g2)[k]!));
    for (const [layout, yi] of await layouts(y2, [1, 0])) expectClose(await ops.run("pointwise", RELU_GRAD, [await ops.spaced(g2), yi], [5, 6]), want2, layout, { abs: 0, rel: 0 });
  });

  it("errors: shapes that differ", async () => {
    const x = randomTensor([2, 3], 1);
    await expect(ops.error("pointwise", RELU_GRAD, [x, randomTensor([3, 2], 1)], [2, 3], "act")).resolves.toMatchObject({ code: "shape", subject: "act.x1" });
  });
});

describe("gelu-grad", () => {
  const line = [...Array.from({ length: 401 }, (_, i) => -10 + i * 0.05), -1e-3, 1e-3, 0, 10.5, -10.5];
  for (const approximate of ["none", "tanh"] as const) {
    it(`${approximate}: -10..10 vs float64; far values give 1 or 0; NaN stays NaN; strided`, async () => {
      const x = Tensor.from(line, [line.length]);
      const g = randomTensor([line.length], 60, 2);
      const want = values(x).map((v, k) => values(g)[k]! * geluGrad64(v, approximate));
      expectClose(await ops.run("gelu-grad", { approximate }, [g, x], x.shape), want, approximate, { abs: 1e-5, rel: 1e-5 });
      const far = [30, -30, 1e4, -1e4, 3e38, -3e38, Infinity, -Infinity];
      const ones = Tensor.from(new Array<number>(far.length).fill(1), [far.length]);
      const big = values(await ops.run("gelu-grad", { approximate }, [ones, Tensor.from(far, [far.length])], [far.length]));
      far.forEach((v, k) => expect(big[k], `gelu'(${v})`).toBeCloseTo(v > 0 ? 1 : 0, 6));
      const nan = values(await ops.run("gelu-grad", { approximate }, [Tensor.from([1, Number.NaN], [2]), Tensor.from([Number.NaN, 1], [2])], [2]));
      expect(nan.map(Number.isNaN)).toEqual([true, true]);
      const x2 = randomTensor([5, 6], 61, 4);
      const g2 = randomTensor([5, 6], 62);
      const want2 = values(x2).map((v, k) => values(g2)[k]! * geluGrad64(v, approximate));
      for (const [layout, xi] of await layouts(x2, [1, 0])) expectClose(await ops.run("gelu-grad", { approximate }, [await ops.spaced(g2), xi], [5, 6]), want2, `${approximate} ${layout}`);
    });
  }

  it("errors: an unknown approximate, shapes that differ", async () => {
    const x = randomTensor([2, 3], 1);
    await expect(ops.error("gelu-grad", { approximate: "fast" }, [x, x], [2, 3], "act")).resolves.toMatchObject({ code: "attr", subject: "act.approximate" });
    await expect(ops.error("gelu-grad", { approximate: "none" }, [x, randomTensor([3, 2], 1)], [2, 3], "act")).resolves.toMatchObject({ code: "shape", subject: "act.x" });
  });
});

describe("embedding-grad", () => {
  const V = 7;
  const E = 5;

  it("repeated ids accumulate, unnamed rows are exactly 0; ids [B, T], [N] and []", async () => {
    for (const [ids, shape] of [[[6, 0, 3, 3, 1, 6], [2, 3]], [[2, 2, 2, 2], [4]], [[4], []]] as const) {
      const g = randomTensor([...shape, E], 70);
      const got = await ops.run("embedding-grad", { rows: V }, [Tensor.int32(ids, shape), g], [V, E]);
      expect(got.shape).toEqual([V, E]);
      const want = embeddingGrad64(ids, values(g), V, E);
      expectClose(got, want, `ids [${shape.join(", ")}]`);
      values(got).forEach((v, k) => want[k] === 0 && expect(Object.is(v, 0)).toBe(true));
    }
  });

  it("strided, offset ids and grad; many positions on one id; a large table", async () => {
    const t = [1, 5, 2, 6, 1, 4];
    const ids = Tensor.int32(t, [2, 3]);
    const g = randomTensor([2, 3, E], 71);
    const want = embeddingGrad64(t, values(g), V, E);
    for (const idv of [await ops.permuted(ids, [1, 0]), await ops.spaced(ids)]) {
      for (const [layout, gi] of await layouts(g, [2, 0, 1])) expectClose(await ops.run("embedding-grad", { rows: V }, [idv, gi], [V, E]), want, layout);
    }
    const many = Array.from({ length: 600 }, (_, k) => (k % 3 === 0 ? 3 : (k * 7) % 1000));
    const gm = randomTensor([600, 4], 72);
    expectClose(await ops.run("embedding-grad", { rows: 1000 }, [Tensor.int32(many, [600]), gm], [1000, 4]), embeddingGrad64(many, values(gm), 1000, 4), "600 positions", { abs: 1e-5, rel: 1e-4 });
  });

  it("an id of V or -1 is the forward embedding's error (node, position, id), without a readback for an upload", async () => {
    const table = randomTensor([V, E], 73);
    const g = randomTensor([2, 3, E], 74);
    for (const bad of [V, -1, 2 ** 31 - 1]) {
      const ids = await webgpu.upload(Tensor.int32([0, 1, 2, bad, 0, 0], [2, 3]));
      const before = webgpu.stats.readbacks;
      const e = await ops.error("embedding-grad", { rows: V }, [ids, g], [V, E], "wte");
      expect(webgpu.stats.readbacks - before, "no readback for an upload").toBe(0);
      expect(e).toMatchObject({ code: "input", subject: "wte.ids", got: `${bad} at [1, 0]`, expected: `token id in [0, ${V})` });
      const forward = await ops.error("embedding", {}, [ids, table], [2, 3, E], "wte");
      expect(AttnGraphError.isInstance(e) && AttnGraphError.isInstance(forward)).toBe(true);
      expect((e as AttnGraphError).message).toBe((forward as AttnGraphError).message);
    }
    const view = await ops.permuted(Tensor.int32([0, 1, 2, 9, 3, 4], [3, 2]), [1, 0]);
    await expect(ops.error("embedding-grad", { rows: V }, [view, randomTensor([3, 2, E], 1)], [V, E], "wte")).resolves.toMatchObject({ subject: "wte.ids", got: "9 at [1, 1]" });
  });

  it("errors: float32 ids, a grad that does not match the ids, rows < 1", async () => {
    const g = randomTensor([2, E], 1);
    await expect(ops.error("embedding-grad", { rows: V }, [Tensor.from([0, 1], [2]), g], [V, E], "wte")).resolves.toMatchObject({ code: "input", subject: "wte.ids", expected: "int32", got: "float32" });
    await expect(ops.error("embedding-grad", { rows: V }, [Tensor.int32([0, 1, 2], [3]), g], [V, E], "wte")).resolves.toMatchObject({ code: "shape", subject: "wte.grad" });
    await expect(ops.error("embedding-grad", { rows: V }, [Tensor.int32([0, 1], [2]), randomTensor([2], 1)], [V, E], "wte")).resolves.toMatchObject({ code: "shape", subject: "wte.grad" });
    await expect(ops.error("embedding-grad", { rows: 0 }, [Tensor.int32([0, 1], [2]), g], [0, E], "wte")).resolves.toMatchObject({ code: "attr", subject: "wte.rows" });
  });
});

describe("cross-entropy-grad", () => {
  const attrs = (reduction: "mean" | "sum" | "none", ignoreIndex: number | null = null): Record<string, unknown> => ({ reduction, ignoreIndex });

  for (const [label, shape] of [["[6, 5]", [6, 5]], ["[2, 3, 150] (past one workgroup)", [2, 3, 150]]] as const) {
    it(`${label}: each reduction, with and without grad, with ignoreIndex`, async () => {
      const v = shape[shape.length - 1]!;
      const lead = shape.slice(0, -1);
      const logits = randomTensor([...shape], 80, 3);
      const t = Array.from({ length: sizeOf(lead) }, (_, k) => (k % 4 === 1 ? -100 : (k * 7 + 3) % v));
      const targets = Tensor.int32(t, lead);
      for (const reduction of ["mean", "sum", "none"] as const) {
        const g = reduction === "none" ? randomTensor(lead, 81, 2) : Tensor.from([1.7], []);
        for (const ignoreIndex of [null, -100]) {
          const tt = ignoreIndex === null ? t.map((c) => (c < 0 ? 0 : c)) : t;
          const tg = Tensor.int32(tt, lead);
          expectClose(await ops.run("cross-entropy-grad", attrs(reduction, ignoreIndex), [logits, tg, g], [...shape]), crossEntropyGrad64(values(logits), v, tt, reduction, ignoreIndex, values(g)), `${reduction} ignore ${ignoreIndex}`);
          expectClose(await ops.run("cross-entropy-grad", attrs(reduction, ignoreIndex), [logits, tg], [...shape]), crossEntropyGrad64(values(logits), v, tt, reduction, ignoreIndex), `${reduction} ignore ${ignoreIndex}, no grad`);
        }
        const got = values(await ops.run("cross-entropy-grad", attrs(reduction, -100), [logits, targets, g], [...shape]));
        t.forEach((c, p) => c === -100 && expect(got.slice(p * v, p * v + v).every((x) => Object.is(x, 0))).toBe(true));
      }
    });
  }

  it("strided logits, targets and grad; all ignored under mean gives zeros; logits of 1e4; NaN rows", async () => {
    const logits = randomTensor([3, 4, 9], 82, 2);
    const t = [0, 8, 4, 4, 1, 7, 2, 3, 6, 5, 8, 0];
    const targets = Tensor.int32(t, [3, 4]);
    const g = randomTensor([3, 4], 83);
    const want = crossEntropyGrad64(values(logits), 9, t, "none", null, values(g));
    for (const [layout, li] of await layouts(logits, [2, 0, 1])) {
      expectClose(await ops.run("cross-entropy-grad", attrs("none"), [li, await ops.permuted(targets, [1, 0]), await ops.spaced(g)], [3, 4, 9]), want, layout);
    }
    const meanWant = crossEntropyGrad64(values(logits), 9, t, "mean", null, [0.5]);
    expectClose(await ops.run("cross-entropy-grad", attrs("mean"), [logits, await ops.spaced(targets), await ops.spaced(Tensor.from([0.5], []))], [3, 4, 9]), meanWant, "mean, spaced");
    const none = Tensor.int32(new Array<number>(12).fill(-1), [3, 4]);
    const zeros = values(await ops.run("cross-entropy-grad", attrs("mean", -1), [logits, none], [3, 4, 9]));
    expect(zeros.every((x) => Object.is(x, 0))).toBe(true);
    const huge = Tensor.from([1e4, -1e4, 0, 1e4, 1e4, -1e4], [2, 3]);
    expectClose(await ops.run("cross-entropy-grad", attrs("sum"), [huge, Tensor.int32([1, 0], [2])], [2, 3]), crossEntropyGrad64(values(huge), 3, [1, 0], "sum", null), "1e4");
    const special = Tensor.from([1, Number.NaN, 0, -Infinity, -Infinity, -Infinity, 2, -Infinity, 1], [3, 3]);
    const s = values(await ops.run("cross-entropy-grad", attrs("none"), [special, Tensor.int32([0, 1, 0], [3])], [3, 3]));
    expect(s.slice(0, 6).every(Number.isNaN), "a NaN logit, a row of −∞").toBe(true);
    expectClose(Tensor.from(s.slice(6), [3]), crossEntropyGrad64([2, -Infinity, 1], 3, [0], "none", null), "a −∞ logit");
  });

  it("a target out of range is the forward cross-entropy's error; the grad's shape is checked", async () => {
    const logits = randomTensor([2, 3, 4], 84);
    for (const [t, ignoreIndex] of [[[0, 1, 4, 2, 3, 0], null], [[0, 1, -1, 2, 3, 0], -100]] as const) {
      const targets = await webgpu.upload(Tensor.int32(t, [2, 3]));
      for (const reduction of ["mean", "none"] as const) {
        const e = await ops.error("cross-entropy-grad", attrs(reduction, ignoreIndex), [logits, targets], [2, 3, 4], "loss");
        const forward = await ops.error("cross-entropy", attrs(reduction, ignoreIndex), [logits, targets], reduction === "none" ? [2, 3] : [], "loss");
        expect(e).toMatchObject({ code: "input", subject: "loss.targets", got: `${t[2]} at [0, 2]` });
        expect(AttnGraphError.isInstance(forward)).toBe(true);
        expect((e as AttnGraphError).message).toBe((forward as AttnGraphError).message);
      }
    }
    const targets = Tensor.int32([0, 1, 2, 3, 0, 1], [2, 3]);
    await expect(ops.error("cross-entropy-grad", attrs("mean"), [logits, targets, Tensor.from([1, 2], [2])], [2, 3, 4], "loss")).resolves.toMatchObject({ code: "shape", subject: "loss.grad" });
    await expect(ops.error("cross-entropy-grad", attrs("none"), [logits, targets, Tensor.from([1, 2, 3], [3])], [2, 3, 4], "loss")).resolves.toMatchObject({ code: "shape", subject: "loss.grad" });
    await expect(ops.error("cross-entropy-grad", attrs("none"), [logits, Tensor.from([0, 1, 2, 3, 0, 1], [2, 3])], [2, 3, 4], "loss")).resolves.toMatchObject({ code: "input", subject: "loss.targets", expected: "int32" });
  });
});

describe("rope inverse", () => {
  it("rotates by −θ (whole and partial rotary dims, strided x), and undoes rope", async () => {
    for (const [shape, rotaryDim, positionOffset] of [[[2, 3, 5, 8], null, 0], [[1, 2, 4, 7], 6, 1000]] as const) {
      const x = randomTensor([...shape], 90);
      const r = rotaryDim ?? shape[3];
      const a = { base: 10000, rotaryDim, positionOffset };
      for (const [layout, xi] of await layouts(x, [3, 0, 2, 1])) {
        for (const inverse of [false, true]) {
          expectClose(await ops.run("rope", { ...a, inverse }, [xi], [...shape]), rope64(values(x), shape, 10000, r, positionOffset, inverse), `${layout} inverse ${inverse}`);
        }
      }
      const there = await ops.dispatch("rope", { ...a, inverse: false }, [x], [...shape]);
      expectClose(await ops.run("rope", { ...a, inverse: true }, [there], [...shape]), values(x), "round trip");
      webgpu.release(there);
    }
    await expect(ops.error("rope", { base: 10000, rotaryDim: null, positionOffset: 0, inverse: 1 }, [randomTensor([1, 1, 2, 4], 1)], [1, 1, 2, 4], "rope")).resolves.toMatchObject({
      code: "attr",
      subject: "rope.inverse",
    });
  });
});
