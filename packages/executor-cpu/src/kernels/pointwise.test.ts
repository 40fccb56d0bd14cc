import { describe, expect, it } from "vitest";
import { pointwiseGrad, reluOp, siluOp, type Expr } from "@attngraph/graph";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { pointwiseKernel } from "./pointwise.js";

// silu as the scheduler lowers it (x0 · sigmoid(x0)) and its derived gradient over (x0 = grad, x1 = x).
const silu = siluOp.pointwise!({});
const siluGrad = (pointwiseGrad(silu, 0) as { expr: Expr }).expr;
const relu = reluOp.pointwise!({});
const reluGrad = (pointwiseGrad(relu, 0) as { expr: Expr }).expr;
const run = (expr: Expr, inputs: Tensor[], out?: Tensor, node = "mlp.act") =>
  pointwiseKernel({ kind: "pointwise", node, attrs: { expr }, inputs, outShape: inputs[0]!.shape, out }) as Tensor;

describe("pointwise kernel", () => {
  it("silu: x · sigmoid(x), finite at the extremes: a large negative x gives −0, +∞ stays +∞ (no ∞/∞)", () => {
    const got = run(silu, [Tensor.from([0, 1, -1, -3e38, 3e38, Infinity], [6])]).toArray();
    expect(got[0]).toBe(0);
    expect(got[1]).toBeCloseTo(0.7310585786300049, 6);
    expect(got[2]).toBeCloseTo(-0.2689414213699951, 6);
    expect(Object.is(got[3], -0)).toBe(true);
    expect(got.slice(4)).toEqual([Math.fround(3e38), Infinity]);
  });

  it("reads a strided input and may write in place", () => {
    const x = Tensor.from([-1, 2, -3, 4, 5, -6], [2, 3]).transpose(0, 1);
    const dense = run(silu, [x.contiguous()]).toArray();
    expect(run(silu, [x]).toArray()).toEqual(dense);
    const y = x.contiguous();
    expect(run(silu, [y], y)).toBe(y);
    expect(y.toArray()).toEqual(dense);
  });

  it("silu's derived gradient is grad · (s + x · s(1 − s)); 0 far below 0, not NaN; inputs must share a shape", () => {
    const x = Tensor.from([0, 2, -3e38], [3]);
    const g = Tensor.from([2, 1, 5], [3]);
    const got = run(siluGrad, [g, x], undefined, "act.grad").toArray();
    expect(got[0]).toBe(1); // silu'(0) = 1/2
    expect(got[1]).toBeCloseTo(1.0907842487848955, 6);
    expect(got[2] === 0).toBe(true);
    try {
      run(siluGrad, [g, Tensor.from([1, 2], [2])], undefined, "act.grad");
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect((e as AttnGraphError).subject).toBe("act.grad.x1");
    }
  });

  it("three inputs, a where; an expression reading an absent input or a variable is a typed error naming the node", () => {
    const e = (name: string) => ({ op: "input", name, index: [] }) as const;
    const expr = {
      op: "where",
      args: [{ op: "gt", args: [e("x0"), 0] }, { op: "mul", args: [e("x1"), e("x2")] }, e("x2")],
    } as Expr;
    const got = run(expr, [Tensor.from([1, -1], [2]), Tensor.from([3, 4], [2]), Tensor.from([5, 6], [2])]).toArray();
    expect(got).toEqual([15, 6]);
    for (const bad of [
      { op: "add", args: [e("x0"), e("x3")] },
      { op: "add", args: [e("x0"), "q"] },
    ] as Expr[]) {
      try {
        run(bad, [Tensor.from([1], [1])], undefined, "user.op");
        expect.unreachable();
      } catch (err) {
        expect(AttnGraphError.isInstance(err)).toBe(true);
        expect((err as AttnGraphError).subject).toMatch(/^user\.op\.expr/);
      }
    }
  });

  it("relu: NaN and +∞ kept, −∞ and −0 give +0; its derived gradient is a select (an ∞ grad where x <= 0 gives 0)", () => {
    const x = Tensor.from([-2, -0, 0, 3.5, NaN, Infinity, -Infinity], [7]);
    const y = run(relu, [x]).toArray();
    expect(y.map((v) => (Object.is(v, -0) ? "-0" : v))).toEqual([0, 0, 0, 3.5, NaN, Infinity, 0]);
    const g = Tensor.from([Infinity, NaN, 5, 2, 7, 1, Infinity], [7]);
    expect(run(reluGrad, [g, x]).toArray()).toEqual([0, 0, 0, 2, 7, 1, 0]);
  });
});
