import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, type Shape } from "@attngraph/tensor";
import { randomTensor as rand } from "@attngraph/testkit";
import { expectNear as near } from "@attngraph/testkit/test-helpers";
import { sumToKernel } from "./sum-to.js";

const run = (x: Tensor, to: Shape) =>
  sumToKernel({ kind: "sum-to", node: "bias.grad", attrs: { shape: to }, inputs: [x], outShape: to });

/** The float64 reference: every element of x added where its index lands in `to` (summed axes contribute index 0). */
function sumTo64(x: Tensor, to: Shape): number[] {
  const xs = x.shape;
  const lead = xs.length - to.length;
  const values = x.toArray();
  const out = new Array<number>(to.reduce((a, b) => a * b, 1)).fill(0);
  for (let k = 0; k < values.length; k++) {
    let rest = k;
    let o = 0;
    let mul = 1;
    for (let d = xs.length - 1; d >= 0; d--) {
      const i = rest % xs[d]!;
      rest = Math.floor(rest / xs[d]!);
      if (d < lead) continue;
      const t = to[d - lead]!;
      o += (t === 1 ? 0 : i) * mul;
      mul *= t;
    }
    out[o]! += values[k]!;
  }
  return out;
}

describe("sum-to kernel", () => {
  const x = rand([2, 3, 4], 1);

  it.each([[[4]], [[1, 3, 4]], [[2, 1, 4]], [[3, 1]], [[1, 1, 1]], [[]]] as const)(
    "sums [2, 3, 4] down to %j",
    (to) => {
      const y = run(x, to);
      expect(y.shape).toEqual(to);
      near(y, sumTo64(x, to));
    },
  );

  it("sums over leading axes: the bias gradient of [2, 3, 4] is [4]", () => {
    const v = x.toArray();
    const want = [0, 1, 2, 3].map((j) => v.filter((_, k) => k % 4 === j).reduce((a, b) => a + b, 0));
    near(run(x, [4]), want);
  });

  it("sums middle axes of 1: GQA head groups [B, Hkv, g, S, D] → [B, Hkv, 1, S, D]", () => {
    const g = rand([2, 2, 3, 5, 4], 2);
    near(run(g, [2, 2, 1, 5, 4]), sumTo64(g, [2, 2, 1, 5, 4]));
  });

  it("copies x exactly when the shape is x's own, −0 included", () => {
    const t = Tensor.from([-0, 1.5, -2.25, 3], [2, 2]);
    const got = run(t, [2, 2]).toFloat32Array();
    expect(Array.from(got)).toEqual([-0, 1.5, -2.25, 3]);
    expect(Object.is(got[0], -0)).toBe(true);
  });

  it("reads a transposed (strided) input", () => {
    const t = rand([4, 3, 2], 3).permute([2, 1, 0]); // [2, 3, 4], not contiguous
    expect(t.isContiguous()).toBe(false);
    for (const to of [[4], [2, 1, 4], [3, 1], [2, 3, 4]]) near(run(t, to), sumTo64(t, to));
  });

  it("gives 0 for an empty x", () => {
    expect(run(Tensor.zeros([0, 3]), [1, 3]).toArray()).toEqual([0, 0, 0]);
    expect(Object.is(run(Tensor.zeros([0, 3]), [3]).toArray()[0], 0)).toBe(true);
  });

  it("propagates NaN to the sums it reaches only", () => {
    const t = Tensor.from([1, NaN, 2, 3], [2, 2]);
    const got = run(t, [2]).toArray();
    expect(got[0]).toBe(3);
    expect(got[1]).toBeNaN();
  });

  it("rejects a shape x does not broadcast from, naming the node", () => {
    for (const to of [[5], [2, 2, 4], [1, 2, 3, 4]]) {
      try {
        run(x, to);
        expect.unreachable();
      } catch (e) {
        expect(AttnGraphError.isInstance(e) && e.code).toBe("shape");
        expect((e as AttnGraphError).subject).toBe("bias.grad.shape");
      }
    }
  });
});
