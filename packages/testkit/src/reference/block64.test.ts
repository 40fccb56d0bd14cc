import { describe, expect, it } from "vitest";
import { add64, crossEntropy64, embedding64, erf64, gelu64, layerNorm64, maskFull64, relu64 } from "./block64.js";

describe("float64 references of the block ops", () => {
  it("erf64 matches tabulated values (Abramowitz & Stegun table 7.1, and erfc tails) to 1e-14", () => {
    const table: [number, number][] = [
      [0, 0],
      [0.1, 0.1124629160182849],
      [0.5, 0.5204998778130465],
      [1, 0.8427007929497149],
      [2, 0.9953222650189527],
      [2.5, 0.999593047982555],
      [3, 0.9999779095030014],
      [4, 0.9999999845827421],
    ];
    for (const [x, want] of table) {
      expect(Math.abs(erf64(x) - want), `erf(${x})`).toBeLessThan(1e-14);
      expect(Math.abs(erf64(-x) + want), `erf(${-x})`).toBeLessThan(1e-14);
    }
    expect(erf64(10)).toBe(1);
    expect(erf64(NaN)).toBeNaN();
  });

  it("gelu64: both forms, to 1e-13 of an independent libm", () => {
    // The definitions evaluated with CPython's math.erf and math.tanh (an independent libm), as
    // torch.nn.functional.gelu computes them in float64.
    const x = Float64Array.of(-3, -1, 0.5, 2);
    const exact = [-0.00404969409489031, -0.15865525393145707, 0.34573123063700656, 1.9544997361036416];
    const tanh = [-0.0036373920817729943, -0.15880800939172324, 0.34571400982514394, 1.954597694087775];
    gelu64(x, "none").forEach((v, i) => expect(v).toBeCloseTo(exact[i]!, 13));
    gelu64(x, "tanh").forEach((v, i) => expect(v).toBeCloseTo(tanh[i]!, 13));
  });

  it("relu64: max(x, 0); NaN and +∞ kept, −∞ and −0 give +0 (torch.relu)", () => {
    const y = relu64(Float64Array.of(-2, -0, 0, 1e-30, 3.5, NaN, Infinity, -Infinity));
    expect([...y]).toEqual([0, 0, 0, 1e-30, 3.5, NaN, Infinity, 0]);
    expect(Object.is(y[1], 0)).toBe(true);
  });

  it("layerNorm64: zero mean, unit biased variance, affine; a constant row gives the bias", () => {
    const y = layerNorm64(Float64Array.of(1, 2, 3, 4), 4, 0);
    expect(y.reduce((a, v) => a + v, 0)).toBeCloseTo(0, 12);
    expect(y.reduce((a, v) => a + v * v, 0) / 4).toBeCloseTo(1, 12);
    expect([
      ...layerNorm64(Float64Array.of(5, 5, 5), 3, 1e-5, Float64Array.of(2, 2, 2), Float64Array.of(1, -1, 0)),
    ]).toEqual([1, -1, 0]);
  });

  it("add64 broadcasts leading and size-1 axes", () => {
    const r = add64(Float64Array.of(1, 2, 3, 4, 5, 6), [2, 3], Float64Array.of(10, 20, 30), [3]);
    expect(r.shape).toEqual([2, 3]);
    expect([...r.data]).toEqual([11, 22, 33, 14, 25, 36]);
    const c = add64(Float64Array.of(1, 2), [2, 1], Float64Array.of(10, 20, 30), [1, 3]);
    expect(c.shape).toEqual([2, 3]);
    expect([...c.data]).toEqual([11, 21, 31, 12, 22, 32]);
  });

  it("embedding64 picks rows and refuses an id out of range", () => {
    expect([...embedding64([2, 0], Float64Array.of(0, 1, 10, 11, 20, 21), 3, 2)]).toEqual([20, 21, 0, 1]);
    expect(() => embedding64([3], Float64Array.of(0, 1, 10, 11, 20, 21), 3, 2)).toThrow(/out of range/);
  });

  it("crossEntropy64: log-sum-exp minus the target logit; ignore_index; an all-ignored mean is 0", () => {
    // F.cross_entropy(torch.tensor([[1., 2., 3.], [1000., 0., -1000.]]), torch.tensor([2, 0])) = 0.2039...
    const logits = Float64Array.of(1, 2, 3, 1000, 0, -1000);
    const per = crossEntropy64(logits, 3, [2, 0], "none");
    expect(per[0]).toBeCloseTo(Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3)) - 3, 14);
    expect(per[1]).toBe(0);
    expect(crossEntropy64(logits, 3, [2, 0], "mean")[0]).toBeCloseTo(per[0]! / 2, 14);
    expect(crossEntropy64(logits, 3, [2, -100], "mean", -100)[0]).toBeCloseTo(per[0]!, 14);
    expect(crossEntropy64(logits, 3, [-100, -100], "mean", -100)[0]).toBe(0);
  });

  it("maskFull64: a 0 in the user mask hides, the bias is added after the scale, composition with causal", () => {
    const scores = Float64Array.of(1, 2, 3, 4); // [1, 1, 2, 2]
    const user = { shape: [2, 2], data: Float64Array.of(1, 0, 1, 1) };
    const bias = { shape: [1, 2], data: Float64Array.of(0.5, -Infinity) };
    const out = maskFull64(
      scores,
      1,
      1,
      2,
      2,
      { causal: true, window: null, alignment: "top-left", scale: 2 },
      undefined,
      user,
      bias,
    );
    expect([...out]).toEqual([2.5, -Infinity, 6.5, -Infinity]);
  });
});
