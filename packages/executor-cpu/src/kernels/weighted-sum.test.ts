import { describe, expect, it } from "vitest";
import { ShapeError, Tensor } from "@attngraph/tensor";
import { weightedSumImpl } from "./weighted-sum.js";
import { dispatchCpu } from "../test-dispatch.js";

const run = (w: Tensor, v: Tensor) =>
  dispatchCpu("weighted-sum", "context", {}, [w, v], [w.shape[0]!, w.shape[1]!, w.shape[2]!, v.shape[3]!]);

const values = (n: number, seed: number) => Array.from({ length: n }, (_, i) => Math.cos(seed * 3.7 + i * 0.9));

/** weights · V with explicit value-head sharing, written independently of the kernel. */
function naiveWeightedSum(w: Tensor, v: Tensor): number[] {
  const [B, H, L, S] = w.shape as [number, number, number, number];
  const [, Hkv, , D] = v.shape as [number, number, number, number];
  const out: number[] = [];
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let l = 0; l < L; l++)
        for (let d = 0; d < D; d++) {
          let acc = 0;
          for (let s = 0; s < S; s++) acc += w.get(b, h, l, s) * v.get(b, Math.floor((h * Hkv) / H), s, d);
          out.push(acc);
        }
  return out;
}

describe("weighted-sum kernel", () => {
  it("computes weights · V (hand-computed)", () => {
    const w = Tensor.from([0.5, 0.5, 1, 0], [1, 1, 2, 2]);
    const v = Tensor.from([1, 2, 3, 3, 4, 5], [1, 1, 2, 3]);
    const y = run(w, v);
    expect(y.shape).toEqual([1, 1, 2, 3]);
    expect(y.toArray()).toEqual([2, 3, 4, 1, 2, 3]);
  });

  it("reads v as a transposed view of [B, S, Hkv, D] without copying", () => {
    const [B, H, L, S, D] = [2, 2, 3, 4, 3];
    const w = Tensor.from(values(B * H * L * S, 1), [B, H, L, S]);
    const v = Tensor.from(values(B * S * H * D, 2), [B, S, H, D]).permute([0, 2, 1, 3]);
    expect(v.isContiguous()).toBe(false);
    const want = naiveWeightedSum(w, v);
    run(w, v)
      .toArray()
      .forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 5));
    expect(Array.from(weightedSumImpl(w, v))).toEqual(Array.from(weightedSumImpl(w, v.contiguous())));
  });

  it.each([2, 1])("shares value heads across query heads (H=4, Hkv=%i)", (Hkv) => {
    const [B, H, L, S, D] = [2, 4, 2, 5, 3];
    const w = Tensor.from(values(B * H * L * S, 3), [B, H, L, S]);
    const v = Tensor.from(values(B * Hkv * S * D, 4), [B, Hkv, S, D]);
    const got = run(w, v);
    expect(got.shape).toEqual([B, H, L, D]);
    const want = naiveWeightedSum(w, v);
    got.toArray().forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 5));
  });

  it("rejects a value length that is not S and Hkv that does not divide H", () => {
    expect(() => run(Tensor.zeros([1, 1, 1, 3]), Tensor.zeros([1, 1, 2, 2]))).toThrow(/context\.v: value length/);
    expect(() => run(Tensor.zeros([1, 2, 1, 3]), Tensor.zeros([1, 3, 3, 2]))).toThrow(ShapeError);
  });
});
