import { describe, expect, it } from "vitest";
import { ShapeError, Tensor } from "@attngraph/tensor";
import { weightedSumImpl } from "./weighted-sum.js";
import { dispatchCpu } from "../test-dispatch.js";
import { expectHeadProduct } from "../test-head-product.js";

const run = (w: Tensor, v: Tensor) =>
  dispatchCpu("weighted-sum", "context", {}, [w, v], [w.shape[0]!, w.shape[1]!, w.shape[2]!, v.shape[3]!]);

const values = (n: number, seed: number) => Array.from({ length: n }, (_, i) => Math.cos(seed * 3.7 + i * 0.9));

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
    expectHeadProduct(run(w, v), w, v, false);
    expect(Array.from(weightedSumImpl(w, v))).toEqual(Array.from(weightedSumImpl(w, v.contiguous())));
  });

  it.each([2, 1])("shares value heads across query heads (H=4, Hkv=%i)", (Hkv) => {
    const [B, H, L, S, D] = [2, 4, 2, 5, 3];
    const w = Tensor.from(values(B * H * L * S, 3), [B, H, L, S]);
    const v = Tensor.from(values(B * Hkv * S * D, 4), [B, Hkv, S, D]);
    expectHeadProduct(run(w, v), w, v, false);
  });

  it("rejects a value length that is not S and Hkv that does not divide H", () => {
    expect(() => run(Tensor.zeros([1, 1, 1, 3]), Tensor.zeros([1, 1, 2, 2]))).toThrow(/context\.v: value length/);
    expect(() => run(Tensor.zeros([1, 2, 1, 3]), Tensor.zeros([1, 3, 3, 2]))).toThrow(ShapeError);
  });
});
