import { describe, expect, it } from "vitest";
import { mul64, rmsNorm64, rmsNormGrad64, rmsNormWeightGrad64, silu64, siluGrad64 } from "./llama64.js";

// Expected values: PyTorch 1.13 in float64 (x * rsqrt(x.pow(2).mean(-1) + eps) * w, F.silu, and their autograd).
describe("float64 references of the Llama block ops", () => {
  const x = Float64Array.of(-3, -1, 0.5, 2, 0.25, -0.75, 1.5, 3);
  const w = Float64Array.of(0.5, -1, 2, 1.5);
  const g = Float64Array.of(1, -2, 0.5, 0.25, -1, 0.5, 2, -0.5);
  const close = (got: Float64Array, want: number[]) => want.forEach((v, i) => expect(got[i]).toBeCloseTo(v, 13));

  it("rmsNorm64 and its gradients match torch's autograd", () => {
    close(
      rmsNorm64(x, 4, 1e-6, w),
      [
        -0.7947193026994829, 0.5298128684663219, 0.5298128684663219, 1.5894386053989658, 0.07254761279245689,
        0.43528567675474134, 1.7411427070189653, 2.611714060528448,
      ],
    );
    close(
      rmsNormGrad64(g, x, 4, 1e-6, w),
      [
        0.013942514353021074, 0.9759710969725972, 0.5716401884463452, 0.365989105594964, -0.3390646159566062,
        -0.14356795680949172, 2.028278620637949, -1.0217756541960847,
      ],
    );
    close(
      rmsNormWeightGrad64(g, x, 4, 1e-6),
      [-1.7345338309838796, 0.8419828985552732, 1.8735959241355458, -0.6056649192763217],
    );
    expect([...rmsNorm64(new Float64Array(4), 4, 1e-6)]).toEqual([0, 0, 0, 0]); // a zero row stays 0
  });

  it("silu64 and siluGrad64 match torch, finite for large |x|", () => {
    const xs = Float64Array.of(-3, -1, 0.5, 2, -800, 800);
    close(silu64(xs), [-0.14227761953270035, -0.2689414213699951, 0.3112296656009273, 1.7615941559557646, -0, 800]);
    close(
      siluGrad64(new Float64Array(6).fill(1), xs),
      [-0.08810410601516962, 0.07232948812851325, 0.7399611873026519, 1.0907842487848955, -0, 1],
    );
  });

  it("mul64 broadcasts from the last axis", () => {
    const r = mul64(Float64Array.of(1, 2, 3, 4, 5, 6), [2, 3], Float64Array.of(10, 100, 1000), [3]);
    expect(r.shape).toEqual([2, 3]);
    expect([...r.data]).toEqual([10, 200, 3000, 40, 500, 6000]);
    expect(() => mul64(new Float64Array(2), [2], new Float64Array(3), [3])).toThrow(/mul64: shapes/);
  });
});
