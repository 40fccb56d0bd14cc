import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { siluKernel } from "./silu.js";
import { siluGradKernel } from "./silu-grad.js";

const run = (x: Tensor, out?: Tensor) => siluKernel({ kind: "silu", node: "mlp.act", attrs: {}, inputs: [x], outShape: x.shape, out }) as Tensor;

describe("silu kernels", () => {
  it("x · sigmoid(x), finite at the extremes: a large negative x gives −0, +∞ stays +∞ (no ∞/∞)", () => {
    const got = run(Tensor.from([0, 1, -1, -3e38, 3e38, Infinity], [6])).toArray();
    expect(got[0]).toBe(0);
    expect(got[1]).toBeCloseTo(0.7310585786300049, 6);
    expect(got[2]).toBeCloseTo(-0.2689414213699951, 6);
    expect(Object.is(got[3], -0)).toBe(true);
    expect(got.slice(4)).toEqual([Math.fround(3e38), Infinity]);
  });

  it("reads a strided input and may write in place", () => {
    const x = Tensor.from([-1, 2, -3, 4, 5, -6], [2, 3]).transpose(0, 1);
    const dense = run(x.contiguous()).toArray();
    expect(run(x).toArray()).toEqual(dense);
    const y = x.contiguous();
    expect(run(y, y)).toBe(y);
    expect(y.toArray()).toEqual(dense);
  });

  it("silu-grad is grad · (s + x · s(1 − s)); 0 far below 0, not NaN; grad and x must share a shape", () => {
    const x = Tensor.from([0, 2, -3e38], [3]);
    const g = Tensor.from([2, 1, 5], [3]);
    const got = (siluGradKernel({ kind: "silu-grad", node: "act.grad", attrs: {}, inputs: [g, x], outShape: [3] }) as Tensor).toArray();
    expect(got[0]).toBe(1); // silu'(0) = 1/2
    expect(got[1]).toBeCloseTo(1.0907842487848955, 6);
    expect(Object.is(got[2], -0) || got[2] === 0).toBe(true);
    try {
      siluGradKernel({ kind: "silu-grad", node: "act.grad", attrs: {}, inputs: [g, Tensor.from([1, 2], [2])], outShape: [3] });
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect((e as AttnGraphError).subject).toBe("act.grad.x");
    }
  });
});
