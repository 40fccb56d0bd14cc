// gelu-grad on wasm against float64 derivatives (test-gelu64.ts): "none" Φ(x) + x·φ(x) with erfc by Simpson's rule
// (independent of the kernel's Chebyshev fit), "tanh" from Math.tanh. Over −10..10: absolute error within 5e-7 of
// gelu'(x) (which is O(1)); then random grads, odd lengths (the vector tail), strided views (the gathered lanes give
// the dense path's bits), the IEEE extremes, and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor } from "../test-util.js";
import { geluPrime64 } from "./test-gelu64.js";

const ex = await wasmExecutor();

const grad64 = (g: Tensor, x: Tensor, approximate: "none" | "tanh") => {
  const gv = f64(g);
  return f64(x).map((v, i) => gv[i]! * geluPrime64(v, approximate));
};

const maxAbs = (got: Float32Array, want: Float64Array) =>
  got.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i]!)), 0);

const run = (g: Tensor, x: Tensor, approximate: "none" | "tanh", views = false) =>
  (views ? onWasmViews : onWasm)(ex, "gelu-grad", { approximate }, [g, x], x.shape);

describe("gelu-grad on wasm", () => {
  for (const approximate of ["none", "tanh"] as const) {
    it(`${approximate}: gelu'(x) within 5e-7 absolute over −10..10 (step 1/128)`, () => {
      const values = Array.from({ length: 20 * 128 + 1 }, (_, i) => -10 + i / 128);
      const x = Tensor.from(values, [values.length]);
      const ones = Tensor.from(new Array<number>(values.length).fill(1), x.shape);
      const got = run(ones, x, approximate).toFloat32Array();
      expect(maxAbs(got, grad64(ones, x, approximate))).toBeLessThan(5e-7);
      expect(got[10 * 128]).toBe(0.5); // gelu'(0) = 1/2 in both forms
    });

    it(`${approximate}: random grads, every length mod 4, far tails (|x| up to 30)`, () => {
      for (const n of [1, 2, 3, 4, 5, 7, 64, 301]) {
        const g = random([n], n, 3);
        const x = random([n], n + 7, 6);
        expect(maxAbs(run(g, x, approximate).toFloat32Array(), grad64(g, x, approximate))).toBeLessThan(1e-5);
      }
      const far = Tensor.from([-30, -20, -15, -12, 12, 15, 20, 30], [8]);
      const g = Tensor.from([1, 2, 3, 4, 5, 6, 7, 8], [8]);
      expect(maxAbs(run(g, far, approximate).toFloat32Array(), grad64(g, far, approximate))).toBeLessThan(1e-5);
    });

    it(`${approximate}: strided grad and x give the dense path's bits`, () => {
      const g = random([3, 4, 5], 1, 2);
      const x = random([3, 4, 5], 2, 4);
      const dense = run(g, x, approximate);
      const gT = g.permute([2, 0, 1]).contiguous().permute([1, 2, 0]);
      const xT = x.permute([1, 0, 2]).contiguous().permute([1, 0, 2]);
      for (const [a, b] of [
        [gT, x],
        [g, xT],
        [gT, xT],
      ] as const) {
        expect(Array.from(run(a, b, approximate, true).toFloat32Array())).toEqual(Array.from(dense.toFloat32Array()));
      }
    });

    it(`${approximate}: NaN and ±∞ in x give NaN; a NaN grad gives NaN; a zero grad gives 0`, () => {
      const x = Tensor.from([NaN, Infinity, -Infinity, 1, 0.5], [5]);
      const g = Tensor.from([1, 1, 1, NaN, 0], [5]);
      const got = Array.from(run(g, x, approximate).toFloat32Array());
      expect(got.slice(0, 4).every(Number.isNaN)).toBe(true);
      expect(got[4]).toBe(0);
    });
  }

  it("shapes that differ, a bad approximate: typed errors naming the field", () => {
    const call = (inputs: Tensor[], attrs: Record<string, unknown>) =>
      thrown(() => onWasm(ex, "gelu-grad", attrs, inputs, [2, 3], "mlp.act.grad")) as AttnGraphError;
    let e = call([random([2, 3], 1), random([3, 2], 2)], { approximate: "none" });
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.code, e.subject]).toEqual(["shape", "mlp.act.grad.x"]);
    e = call([random([2, 3], 1), random([2, 3], 2)], { approximate: "fast" });
    expect([e.code, e.subject]).toEqual(["attr", "mlp.act.grad.approximate"]);
    expect(
      onWasm(ex, "gelu-grad", { approximate: "none" }, [random([0, 3], 1), random([0, 3], 2)], [0, 3]).shape,
    ).toEqual([0, 3]);
  });
});
