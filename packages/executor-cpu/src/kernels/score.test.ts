import { describe, expect, it } from "vitest";
import { ShapeError, Tensor } from "@attngraph/tensor";
import { scoreImpl } from "./score.js";
import { dispatchCpu } from "../test-dispatch.js";
import { expectHeadProduct } from "../test-head-product.js";

const run = (q: Tensor, k: Tensor) =>
  dispatchCpu("score", "scores", {}, [q, k], [q.shape[0]!, q.shape[1]!, q.shape[2]!, k.shape[2]!]);

/** Deterministic, non-symmetric values so a wrong index shows up. */
const values = (n: number, seed: number) => Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.3) * 2);

describe("score kernel", () => {
  it("computes Q·Kᵀ without scaling (hand-computed)", () => {
    const q = Tensor.from([1, 2, 3, 4], [1, 1, 2, 2]); // rows [1, 2], [3, 4]
    const k = Tensor.from([5, 6, 7, 8, 9, 10], [1, 1, 3, 2]); // rows [5, 6], [7, 8], [9, 10]
    const y = run(q, k);
    expect(y.shape).toEqual([1, 1, 2, 3]);
    expect(y.toArray()).toEqual([17, 23, 29, 39, 53, 67]);
  });

  it("reads q and k as transposed views of [B, L, H, D] without copying", () => {
    const [B, L, S, H, D] = [2, 3, 4, 2, 3];
    const q = Tensor.from(values(B * L * H * D, 1), [B, L, H, D]).permute([0, 2, 1, 3]); // (B, H, L, D) view
    const k = Tensor.from(values(B * S * H * D, 2), [B, S, H, D]).permute([0, 2, 1, 3]); // (B, H, S, D) view
    expect(q.isContiguous() || k.isContiguous()).toBe(false);
    expectHeadProduct(run(q, k), q, k, true); // Q·Kᵀ: keys are read transposed
    expect(Array.from(scoreImpl(q, k))).toEqual(Array.from(scoreImpl(q.contiguous(), k.contiguous())));
  });

  it.each([2, 1])("shares key heads across query heads (H=4, Hkv=%i)", (Hkv) => {
    const [B, H, L, S, D] = [2, 4, 3, 5, 2];
    const q = Tensor.from(values(B * H * L * D, 3), [B, H, L, D]);
    const k = Tensor.from(values(B * Hkv * S * D, 4), [B, Hkv, S, D]);
    const got = run(q, k);
    expectHeadProduct(got, q, k, true);
    // Head 1 uses key head 0 when Hkv = 2 (group of 2), so it differs from using key head 1.
    if (Hkv === 2)
      expect(got.get(0, 1, 0, 0)).toBeCloseTo(
        q.get(0, 1, 0, 0) * k.get(0, 0, 0, 0) + q.get(0, 1, 0, 1) * k.get(0, 0, 0, 1),
        5,
      );
  });

  it("rejects Hkv that does not divide H, naming the node", () => {
    const q = Tensor.zeros([1, 4, 1, 2]);
    const k = Tensor.zeros([1, 3, 1, 2]);
    expect(() => run(q, k)).toThrow(ShapeError);
    expect(() => run(q, k)).toThrow(/scores\.k.*multiple of key\/value heads/);
  });

  it("rejects a head-dim mismatch and a missing k", () => {
    expect(() => run(Tensor.zeros([1, 1, 1, 2]), Tensor.zeros([1, 1, 1, 3]))).toThrow(
      /scores\.k: head dim of keys must match queries/,
    );
    expect(() => dispatchCpu("score", "scores", {}, [Tensor.zeros([1, 1, 1, 2])], [1, 1, 1, 1])).toThrow(
      /scores\.k: missing required input 1/,
    );
  });
});
