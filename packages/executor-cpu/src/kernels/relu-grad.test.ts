import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { reluGradKernel } from "./relu-grad.js";
import { relu } from "./relu.js";

const run = (grad: Tensor, y: Tensor) => reluGradKernel({ kind: "relu-grad", node: "mlp.act.grad", attrs: {}, inputs: [grad, y], outShape: y.shape }) as Tensor;

describe("relu-grad kernel", () => {
  it("passes grad where y > 0 and gives exactly 0 where y <= 0, even for a NaN or infinite grad", () => {
    const y = Tensor.from([0, -0, 1e-30, 2, 0, 0, 3], [7]);
    const g = Tensor.from([1, 2, 3, -4, NaN, Infinity, NaN], [7]);
    expect(run(g, y).toArray()).toEqual([0, 0, 3, -4, 0, 0, NaN]);
  });

  it("a NaN y lets grad through (PyTorch's threshold_backward compares y <= 0)", () => {
    expect(run(Tensor.from([5, -6], [2]), Tensor.from([NaN, NaN], [2])).toArray()).toEqual([5, -6]);
  });

  it("is the derivative of the forward relu away from 0: central differences agree", () => {
    const xs = [-3, -1.2, -0.3, 0.4, 1.7, 3];
    const ys = Tensor.from(xs.map(relu), [xs.length]);
    const got = run(Tensor.from(new Array(xs.length).fill(1), [xs.length]), ys).toArray();
    const h = 1e-3;
    xs.forEach((v, k) => expect(got[k]).toBeCloseTo((relu(v + h) - relu(v - h)) / (2 * h), 6));
  });

  it("reads transposed (strided) inputs", () => {
    const g = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]).transpose(0, 1); // [[1, 4], [2, 5], [3, 6]]
    const y = Tensor.from([0, 1, 2, 0, 3, 0], [3, 2]);
    expect(g.isContiguous()).toBe(false);
    expect(run(g, y).toArray()).toEqual([0, 4, 2, 0, 3, 0]);
  });

  it("rejects mismatched shapes, naming node and field", () => {
    try {
      run(Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]), Tensor.from([1, 2, 3, 4, 5, 6], [3, 2]));
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect((e as AttnGraphError).subject).toBe("mlp.act.grad.y");
    }
  });
});
