// softmax-grad on wasm against a float64 loop written here: rows of every length mod 4 (the module's f64x2 path and its
// scalar tail), a scale, strided (transposed) y and grad, fully masked rows (y all 0 → exactly +0, even with a NaN or
// infinite grad), partially masked rows, NaN propagation, and the shape/attribute errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, stridedPairs, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** scale · y ⊙ (grad − Σ_row grad ⊙ y) per row of S, a row with y all 0 → 0, in float64. */
function softmaxGrad64(y: Tensor, grad: Tensor, scale: number): Float64Array {
  const s = y.shape[y.rank - 1]!;
  const yv = f64(y);
  const g = f64(grad);
  const out = new Float64Array(yv.length);
  for (let o = 0; o < yv.length; o += s) {
    if (yv.subarray(o, o + s).every((v) => v === 0)) continue;
    let dot = 0;
    for (let j = 0; j < s; j++) dot += g[o + j]! * yv[o + j]!;
    for (let j = 0; j < s; j++) out[o + j] = scale * yv[o + j]! * (g[o + j]! - dot);
  }
  return out;
}

/** Rows of a softmax over the last axis (host float64, rounded): a realistic y. */
function softmaxRows(x: Tensor): Tensor {
  const s = x.shape[x.rank - 1]!;
  const v = f64(x);
  const out = new Float32Array(v.length);
  for (let o = 0; o < v.length; o += s) {
    const row = v.subarray(o, o + s);
    const m = Math.max(...row);
    const e = row.map((a) => (a === -Infinity ? 0 : Math.exp(a - m)));
    const sum = e.reduce((p, a) => p + a, 0);
    e.forEach((a, j) => (out[o + j] = sum === 0 ? 0 : a / sum));
  }
  return new Tensor(out, x.shape);
}

const run = (y: Tensor, g: Tensor, scale = 1, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "softmax-grad", { scale }, [y, g], y.shape);
const expectGrad = (got: Tensor, y: Tensor, g: Tensor, scale = 1) =>
  expect(worst(got, new Tensor(Float32Array.from(softmaxGrad64(y, g, scale)), y.shape), 1e-6, 1e-5)).toBeLessThan(1);

/** A row of n scores a mask hid entirely. */
const hidden = (n: number): number[] => new Array<number>(n).fill(-Infinity);

describe("softmax-grad on wasm", () => {
  it("rows of every length mod 4, with and without a scale", () => {
    for (const s of [1, 2, 3, 4, 5, 8, 33, 130]) {
      const y = softmaxRows(random([2, 3, s], s, 3));
      const g = random([2, 3, s], s + 100);
      for (const scale of [1, 0.125, -2]) expectGrad(run(y, g, scale), y, g, scale);
    }
  });

  it("strided (transposed) y and grad, each and both", () => {
    const y = softmaxRows(random([2, 9, 7], 1, 2).permute([0, 2, 1]).contiguous()); // [2, 7, 9] values
    const yT = y.permute([0, 2, 1]).contiguous().permute([0, 2, 1]); // same values, strided along S
    const g = random([2, 7, 9], 2);
    const gT = random([9, 2, 7], 3).permute([1, 2, 0]);
    for (const [a, b] of stridedPairs([y, g], [yT, gT])) expectGrad(run(a, b, 0.5, true), a, b, 0.5);
  });

  it("a fully masked row (y all 0) is exactly +0 whatever its grad (NaN, ±∞); partially masked rows follow the formula", () => {
    const s = 6;
    const y = softmaxRows(Tensor.from([...hidden(s), 0.1, -Infinity, 0.3, -Infinity, 0.5, 0.6, ...hidden(s)], [3, s]));
    const g = Tensor.from(
      [1, -2, NaN, Infinity, -Infinity, 3, 0.5, 0.25, -1, 2, 0.3, -0.7, -1, -2, -3, -4, -5, -6],
      [3, s],
    );
    const got = run(y, g, 0.5).toFloat32Array();
    for (const r of [0, 2])
      for (let j = 0; j < s; j++)
        expect(Object.is(got[r * s + j], 0), `row ${r} col ${j}: ${got[r * s + j]}`).toBe(true);
    const want = softmaxGrad64(y, g, 0.5);
    for (let j = 0; j < s; j++) expect(Math.abs(got[s + j]! - want[s + j]!)).toBeLessThan(1e-6);
    // the same through the strided path (rows of 6 elements, strided)
    const gotT = run(y.transpose(0, 1).contiguous().transpose(0, 1), g, 0.5, true).toFloat32Array();
    for (const r of [0, 2]) for (let j = 0; j < s; j++) expect(Object.is(gotT[r * s + j], 0)).toBe(true);
  });

  it("NaN in y or in a visible row's grad makes that row NaN, and only that row", () => {
    const y = softmaxRows(random([3, 5], 4));
    const yNaN = new Tensor(
      Float32Array.from(y.toFloat32Array(), (v, i) => (i === 7 ? NaN : v)),
      [3, 5],
    );
    const got = run(yNaN, random([3, 5], 5)).toFloat32Array();
    expect(Array.from(got.subarray(5, 10)).every(Number.isNaN)).toBe(true);
    expect(
      Array.from(got.subarray(0, 5))
        .concat(Array.from(got.subarray(10)))
        .some(Number.isNaN),
    ).toBe(false);
    const gNaN = new Tensor(
      Float32Array.from(random([3, 5], 6).toFloat32Array(), (v, i) => (i === 12 ? NaN : v)),
      [3, 5],
    );
    const got2 = run(y, gNaN).toFloat32Array();
    expect(Array.from(got2.subarray(10)).every(Number.isNaN)).toBe(true);
    expect(Array.from(got2.subarray(0, 10)).some(Number.isNaN)).toBe(false);
  });

  it("y and grad of different shapes, a scalar y, a bad scale: typed errors naming the field", () => {
    const call = (inputs: Tensor[], attrs: Record<string, unknown> = { scale: 1 }) =>
      thrown(() => onWasm(ex, "softmax-grad", attrs, inputs, [2, 3], "attn.weights.grad")) as AttnGraphError;
    let e = call([random([2, 3], 1), random([3, 2], 2)]);
    expect([e.code, e.subject]).toEqual(["shape", "attn.weights.grad.grad"]);
    e = call([Tensor.from([1], []), Tensor.from([1], [])]);
    expect([e.code, e.subject]).toEqual(["shape", "attn.weights.grad.y"]);
    e = call([random([2, 3], 1), random([2, 3], 2)], { scale: NaN });
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.code, e.subject]).toEqual(["attr", "attn.weights.grad.scale"]);
    // absent scale = 1
    const y = softmaxRows(random([2, 3], 3));
    const g = random([2, 3], 4);
    expectGrad(onWasm(ex, "softmax-grad", {}, [y, g], [2, 3]), y, g);
  });
});
