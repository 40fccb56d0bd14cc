import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { randomTensor as rand } from "@attngraph/testkit";
import { dispatchCpu } from "../test-dispatch.js";

const run = (grad: Tensor, masked: Tensor, scale = 1) =>
  dispatchCpu("mask-grad", "scores.grad", { scale }, [grad, masked], grad.shape);

/** The reference rule: (masked == −∞) ? 0 : scale · grad, each value rounded to float32 as the kernel stores it. */
const maskGrad64 = (grad: Tensor, masked: Tensor, scale: number) => {
  const m = masked.toArray();
  return grad.toArray().map((g, k) => (m[k] === -Infinity ? 0 : Math.fround(scale * g)));
};

describe("mask-grad kernel", () => {
  it("scales the gradient of visible entries and zeroes entries that were −∞", () => {
    const grad = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]);
    const masked = Tensor.from([0.5, -Infinity, -7, -Infinity, -Infinity, 1e30], [2, 3]);
    expect(run(grad, masked, 0.5).toArray()).toEqual([0.5, 0, 1.5, 0, 0, 3]);
  });

  it("only −∞ hides: +∞ and NaN in masked pass the gradient", () => {
    const grad = Tensor.from([1, 2, 3], [3]);
    expect(run(grad, Tensor.from([Infinity, NaN, -Infinity], [3]), 2).toArray()).toEqual([2, 4, 0]);
  });

  it("matches the reference on strided inputs with −∞ scattered in", () => {
    const grad = rand([2, 4, 5], 1).permute([2, 0, 1]); // [5, 2, 4]
    const m = rand([5, 2, 4], 2)
      .toArray()
      .map((v, k) => (k % 3 === 0 ? -Infinity : v));
    const masked = Tensor.from(m, [4, 5, 2]).permute([1, 2, 0]); // [5, 2, 4], strided
    expect(grad.isContiguous() || masked.isContiguous()).toBe(false);
    expect(run(grad, masked, 0.25).toArray()).toEqual(maskGrad64(grad, masked, 0.25));
  });

  it("keeps NaN in the gradient of a visible entry", () => {
    expect(run(Tensor.from([NaN, NaN], [2]), Tensor.from([0, -Infinity], [2])).toArray()).toEqual([NaN, 0]);
  });

  it("rejects operands of different shapes, naming the node", () => {
    try {
      run(rand([2, 3], 1), rand([3, 2], 2));
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e) && e.code).toBe("shape");
      expect((e as AttnGraphError).subject).toBe("scores.grad.masked");
    }
  });
});
