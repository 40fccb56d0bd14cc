import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { randomTensor as rand } from "@attngraph/testkit";
import { thrownSubject as subject, expectNear as near } from "@attngraph/testkit/test-helpers";

import { gelu } from "./gelu.js";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const run = (grad: Tensor, x: Tensor, approximate = "none") =>
  cpu.dispatch({
    kind: "gelu-grad",
    node: "mlp.act.grad",
    attrs: { approximate },
    inputs: [grad, x],
    outShape: x.shape,
  });

/** erf by its Maclaurin series (converges for the |x| <= 4 used here, in float64): independent of the kernel's fit. */
function erf64(x: number): number {
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (-x * x) / n;
    sum += term / (2 * n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

/** The float64 reference: grad · gelu'(x), the formulas of the op's spec. */
function geluGrad64(grad: Tensor, x: Tensor, tanh: boolean): number[] {
  const g = grad.toArray();
  return x.toArray().map((v, k) => {
    let d: number;
    if (tanh) {
      const k0 = Math.sqrt(2 / Math.PI);
      const t = Math.tanh(k0 * (v + 0.044715 * v ** 3));
      d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k0 * (1 + 3 * 0.044715 * v * v);
    } else {
      d = 0.5 * (1 + erf64(v / Math.SQRT2)) + (v * Math.exp(-0.5 * v * v)) / Math.sqrt(2 * Math.PI);
    }
    return g[k]! * d;
  });
}

describe("gelu-grad kernel", () => {
  for (const approximate of ["none", "tanh"] as const) {
    it(`matches the float64 reference (approximate "${approximate}")`, () => {
      const grad = rand([3, 7], 1);
      const x = rand([3, 7], 2, 4);
      near(run(grad, x, approximate), geluGrad64(grad, x, approximate === "tanh"));
    });

    it(`is the derivative of the forward gelu (approximate "${approximate}"): central differences agree`, () => {
      const tanh = approximate === "tanh";
      const xs = [-3, -1.2, -0.3, 0, 0.4, 1.7, 3];
      const got = run(
        Tensor.from(new Array(xs.length).fill(1), [xs.length]),
        Tensor.from(xs, [xs.length]),
        approximate,
      ).toArray();
      const h = 1e-4;
      xs.forEach((v, k) => expect(got[k]).toBeCloseTo((gelu(v + h, tanh) - gelu(v - h, tanh)) / (2 * h), 5));
    });
  }

  it("reads transposed (strided) inputs", () => {
    const grad = rand([5, 4], 3).transpose(0, 1);
    const x2 = new Tensor(rand([41], 4, 3).toFloat32Array(), [4, 5], [10, 2], 1); // every other value, from index 1
    expect(grad.isContiguous() || x2.isContiguous()).toBe(false);
    near(run(grad, x2, "tanh"), geluGrad64(grad, x2, true));
    near(run(grad, x2), geluGrad64(grad, x2, false));
  });

  it("propagates NaN", () => {
    expect(
      run(Tensor.from([1, NaN], [2]), Tensor.from([NaN, 1], [2]))
        .toArray()
        .every(Number.isNaN),
    ).toBe(true);
  });

  it("rejects mismatched shapes and an unknown form, naming node and field", () => {
    expect(subject(() => run(rand([2, 3], 1), rand([3, 2], 2)))).toBe("mlp.act.grad.x");
    expect(subject(() => run(rand([2, 3], 1), rand([2, 3], 2), "sigmoid"))).toBe("mlp.act.grad.approximate");
  });
});
