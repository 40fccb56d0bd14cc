import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { crossEntropyGradOf, randomTensor as rand } from "@attngraph/testkit";
import { thrownSubject as subject, expectNear as near } from "@attngraph/testkit/test-helpers";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

type Reduction = "mean" | "sum" | "none";

const run = (
  logits: Tensor,
  targets: Tensor<"int32">,
  reduction: Reduction,
  ignoreIndex: number | null = null,
  grad?: Tensor,
) =>
  cpu.dispatch({
    kind: "cross-entropy-grad",
    node: "loss.grad",
    attrs: { reduction, ignoreIndex },
    inputs: [logits, targets as unknown as Tensor, grad],
    outShape: logits.shape,
  });

describe("cross-entropy-grad kernel", () => {
  const logits = rand([2, 3, 5], 1, 3);
  const targets = Tensor.int32([0, 4, 2, -100, 1, -100], [2, 3]);

  for (const reduction of ["mean", "sum", "none"] as const) {
    it(`matches the float64 reference (reduction "${reduction}"), with and without a grad, with an ignore index`, () => {
      const grad = reduction === "none" ? rand([2, 3], 2) : Tensor.from([0.75], []);
      near(run(logits, targets, reduction, -100), crossEntropyGradOf(logits, targets, reduction, -100));
      near(run(logits, targets, reduction, -100, grad), crossEntropyGradOf(logits, targets, reduction, -100, grad));
      const all = Tensor.int32([0, 4, 2, 3, 1, 1], [2, 3]);
      near(run(logits, all, reduction), crossEntropyGradOf(logits, all, reduction, null));
    });
  }

  it("gives ignored positions a row of exactly 0, and each counted row sums to 0", () => {
    const got = run(logits, targets, "mean", -100).toArray();
    expect(got.slice(15, 20)).toEqual([0, 0, 0, 0, 0]);
    expect(got.slice(25, 30)).toEqual([0, 0, 0, 0, 0]);
    for (const r of [0, 1, 2, 4])
      expect(Math.abs(got.slice(r * 5, r * 5 + 5).reduce((a, b) => a + b, 0))).toBeLessThan(1e-6);
  });

  it("mean with every position ignored gives zeros, not NaN", () => {
    const got = run(logits, Tensor.int32(new Array(6).fill(-100), [2, 3]), "mean", -100).toArray();
    expect(got.every((v) => v === 0)).toBe(true);
  });

  it("is the derivative of the forward loss: central differences agree", () => {
    const l = rand([3, 4], 3, 2);
    const t = Tensor.int32([1, 3, 0], [3]);
    const got = run(l, t, "mean").toArray();
    const loss = (values: number[]) =>
      cpu
        .dispatch({
          kind: "cross-entropy",
          node: "loss",
          attrs: { reduction: "mean", ignoreIndex: null },
          inputs: [Tensor.from(values, [3, 4]), t as unknown as Tensor],
          outShape: [],
        })
        .toArray()[0]!;
    const base = l.toArray();
    const h = 1e-2;
    base.forEach((_, k) => {
      const up = base.map((v, i) => (i === k ? v + h : v));
      const down = base.map((v, i) => (i === k ? v - h : v));
      expect(got[k]).toBeCloseTo((loss(up) - loss(down)) / (2 * h), 3);
    });
  });

  it("stays finite for logits of 1e4 (the row max is subtracted)", () => {
    const got = run(Tensor.from([1e4, 1e4 - 1, 1e4 - 2], [1, 3]), Tensor.int32([0], [1]), "sum");
    expect(got.toArray().every(Number.isFinite)).toBe(true);
    near(got, crossEntropyGradOf(Tensor.from([1e4, 1e4 - 1, 1e4 - 2], [1, 3]), Tensor.int32([0], [1]), "sum", null));
  });

  it("reads strided logits, targets and grad", () => {
    const l = rand([5, 3, 2], 4, 2).permute([2, 1, 0]); // [2, 3, 5]
    const t = Tensor.int32([3, 0, 4, 4, 1, 2], [3, 2]).transpose(0, 1); // [2, 3]
    const g = rand([3, 2], 5).transpose(0, 1);
    expect(l.isContiguous() || t.isContiguous() || g.isContiguous()).toBe(false);
    near(run(l, t, "none", null, g), crossEntropyGradOf(l, t, "none", null, g));
    near(run(l, t, "mean", 4), crossEntropyGradOf(l, t, "mean", 4));
  });

  it("rejects a target outside [0, V) with the forward kernel's error, naming node, position and target", () => {
    const bad = Tensor.int32([0, 5, 2, -100, 1, -100], [2, 3]);
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as AttnGraphError;
      }
      return undefined;
    };
    const got = err(() => run(logits, bad, "sum", -100));
    expect(AttnGraphError.isInstance(got) && got.code).toBe("input");
    expect(got?.subject).toBe("loss.grad.targets");
    expect(got?.message).toContain("5 at [0, 1]");
    const fwd = err(() =>
      cpu.dispatch({
        kind: "cross-entropy",
        node: "loss.grad",
        attrs: { reduction: "sum", ignoreIndex: -100 },
        inputs: [logits, bad as unknown as Tensor],
        outShape: [],
      }),
    );
    expect(got?.message).toBe(fwd?.message);
    // Without an ignore index, −100 is just out of range.
    expect(err(() => run(logits, targets, "mean"))?.message).toContain("-100 at [1, 0]");
  });

  it("rejects a grad of the wrong shape for its reduction, targets of the wrong shape, and bad attributes", () => {
    const t = Tensor.int32([0, 1, 2, 3, 4, 0], [2, 3]);
    expect(subject(() => run(logits, t, "mean", null, rand([2, 3], 1)))).toBe("loss.grad.grad");
    expect(subject(() => run(logits, t, "none", null, Tensor.from([1], [])))).toBe("loss.grad.grad");
    expect(subject(() => run(logits, Tensor.int32([0, 1, 2], [3]), "sum"))).toBe("loss.grad.targets");
    expect(subject(() => run(logits, t, "max" as Reduction))).toBe("loss.grad.reduction");
    expect(subject(() => run(logits, t, "sum", 1.5))).toBe("loss.grad.ignoreIndex");
    // An integer outside int32 passes the declaration's "integer" spec; the kernel keeps it to the targets' type.
    expect(subject(() => run(logits, t, "sum", 2 ** 31))).toBe("loss.grad.ignoreIndex");
  });
});
