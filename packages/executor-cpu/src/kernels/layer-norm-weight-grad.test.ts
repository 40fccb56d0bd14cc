import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { thrownSubject as subject } from "@attngraph/testkit/test-helpers";
import { dispatchCpu } from "../test-dispatch.js";
import { near, normalizedRows64, rand } from "../test-layer-norm64.js";

const run = (grad: Tensor, x: Tensor, eps = 1e-5) =>
  dispatchCpu("layer-norm-weight-grad", "ln1.weight.grad", { eps }, [grad, x], [x.shape.at(-1)!]);

/** The float64 reference: Σ over rows of grad ⊙ x̂, x̂ = (x − mean) / sqrt(var + eps) per row. */
function weightGrad64(grad: Tensor, x: Tensor, eps: number): number[] {
  const n = x.shape.at(-1)!;
  const gv = grad.toArray();
  const out = new Array<number>(n).fill(0);
  normalizedRows64(x, eps).forEach(({ xh }, r) => {
    for (let j = 0; j < n; j++) out[j]! += gv[r * n + j]! * xh[j]!;
  });
  return out;
}

describe("layer-norm-weight-grad kernel", () => {
  it("sums grad ⊙ x̂ over every row", () => {
    const grad = rand([2, 5, 8], 1);
    const x = rand([2, 5, 8], 2, 3);
    const y = run(grad, x, 1e-3);
    expect(y.shape).toEqual([8]);
    near(y, weightGrad64(grad, x, 1e-3));
  });

  it("reads transposed (strided) inputs", () => {
    const grad = rand([6, 3, 2], 3).permute([2, 1, 0]); // [2, 3, 6]
    const x = rand([6, 2, 3], 4).permute([1, 2, 0]);
    expect(grad.isContiguous() || x.isContiguous()).toBe(false);
    near(run(grad, x), weightGrad64(grad, x, 1e-5));
  });

  it("gives zeros for no rows", () => {
    expect(run(Tensor.zeros([0, 3]), Tensor.zeros([0, 3])).toArray()).toEqual([0, 0, 0]);
  });

  it("rejects mismatched shapes and a bad eps, naming node and field", () => {
    expect(subject(() => run(rand([2, 4], 1), rand([4, 2], 2)))).toBe("ln1.weight.grad.x");
    expect(subject(() => run(rand([2, 4], 1), rand([2, 4], 2), -1))).toBe("ln1.weight.grad.eps");
  });
});
