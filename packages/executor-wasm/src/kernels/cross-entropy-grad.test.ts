// cross-entropy-grad on wasm against the testkit's float64 reference: every reduction with and without a loss gradient,
// ignoreIndex (inside and outside [0, V); ignored rows exactly 0, not counted by "mean"; all ignored → zeros), strided
// logits, targets and grad, huge and infinite logits, NaN propagation; an out-of-range target is the forward kernel's
// error (naming the node, the position and the value), thrown before anything is written, and the executor stays
// usable; and the call's other errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import { crossEntropyGradOf } from "@attngraph/testkit";
import { onWasm, onWasmViews, random, thrown, uploadView, wasmExecutor, worst } from "../test-util.js";
import { failsUntouched } from "../test-dispatch.js";

const ex = await wasmExecutor();
type Reduction = "mean" | "sum" | "none";

const run = (
  logits: Tensor,
  targets: Tensor<"int32">,
  reduction: Reduction,
  ignoreIndex: number | null = null,
  grad?: Tensor,
  views = false,
) =>
  (views ? onWasmViews : onWasm)(
    ex,
    "cross-entropy-grad",
    { ignoreIndex, reduction },
    [logits, targets, grad],
    logits.shape,
  );

const expectGrad = (got: Tensor, want: Float64Array) => {
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), 1e-6, 1e-5)).toBeLessThan(1);
};

describe("cross-entropy-grad on wasm", () => {
  const logits = random([2, 5, 11], 1, 3);
  const targets = Tensor.int32([0, 10, 3, 3, 7, 1, 2, 9, 5, 0], [2, 5]);
  for (const reduction of ["mean", "sum", "none"] as const) {
    it(`${reduction}: without a loss gradient (= 1) and with one, over [B, T, V] and [N, V]`, () => {
      const grad = reduction === "none" ? random([2, 5], 2, 2) : Tensor.from([0.37], []);
      expectGrad(run(logits, targets, reduction), crossEntropyGradOf(logits, targets, reduction, null));
      expectGrad(
        run(logits, targets, reduction, null, grad),
        crossEntropyGradOf(logits, targets, reduction, null, grad),
      );
      const flat = logits.reshape([10, 11]);
      const ft = targets.reshape([10]);
      const fg = reduction === "none" ? grad.reshape([10]) : grad;
      expectGrad(run(flat, ft, reduction, null, fg), crossEntropyGradOf(flat, ft, reduction, null, fg));
    });
  }

  it("ignoreIndex: ignored rows are exactly 0 and not counted by mean; the ignore index may be any int32, even inside [0, V)", () => {
    for (const ignore of [-100, 3, 2 ** 31 - 1]) {
      const t = Tensor.int32([0, ignore, 4, ignore, 7, 1, 2, ignore, 5, 3], [2, 5]);
      for (const reduction of ["mean", "sum", "none"] as const) {
        const grad = reduction === "none" ? random([2, 5], 3) : Tensor.from([2], []);
        for (const g of [undefined, grad]) {
          const got = run(logits, t, reduction, ignore, g);
          expectGrad(got, crossEntropyGradOf(logits, t, reduction, ignore, g));
          const v = got.toFloat32Array();
          t.toInt32Array().forEach((target, r) => {
            if (target === ignore) for (let j = 0; j < 11; j++) expect(Object.is(v[r * 11 + j], 0)).toBe(true);
          });
        }
      }
    }
  });

  it("every position ignored: all zeros for every reduction (mean divides by nothing)", () => {
    const t = Tensor.int32(new Array<number>(10).fill(-100), [2, 5]);
    for (const reduction of ["mean", "sum", "none"] as const) {
      expect(Array.from(run(logits, t, reduction, -100).toFloat32Array()).every((v) => Object.is(v, 0))).toBe(true);
    }
  });

  it("strided logits (transposed), strided targets and a strided per-position grad", () => {
    const lt = random([11, 2, 5], 4, 3).permute([1, 2, 0]); // [2, 5, 11] strided along V
    const tt = Tensor.int32([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [5, 2]).transpose(0, 1); // [2, 5] strided
    const gt = random([5, 2], 5).transpose(0, 1);
    for (const reduction of ["mean", "sum", "none"] as const) {
      const g = reduction === "none" ? gt : undefined;
      expectGrad(run(lt, tt, reduction, 4, g, true), crossEntropyGradOf(lt, tt, reduction, 4, g));
    }
  });

  it("huge logits stay finite (the row max is subtracted); NaN or +∞ in a counted row gives a NaN row, only there", () => {
    const big = Tensor.from([1e30, -1e30, 0, 3e38, 3e38, 1, -Infinity, 2, 3], [3, 3]);
    const t = Tensor.int32([0, 1, 2], [3]);
    const got = run(big, t, "sum");
    expectGrad(got, crossEntropyGradOf(big, t, "sum", null));
    expect(Array.from(got.toFloat32Array()).every(Number.isFinite)).toBe(true);
    const bad = Tensor.from([NaN, 0, 1, Infinity, 0, 1, 0.5, 0.25, 0], [3, 3]);
    const v = Array.from(run(bad, t, "none").toFloat32Array());
    expect(v.slice(0, 6).every(Number.isNaN)).toBe(true);
    expect(v.slice(6).every(Number.isFinite)).toBe(true);
  });

  it("a target outside [0, V) is the forward kernel's error naming the node, the position and the value; nothing is written", () => {
    const l = ex.upload(random([2, 3, 5], 6));
    for (const bad of [5, -1, -100]) {
      const tv = ex.upload(Tensor.int32([0, 1, 2, 3, bad, 4], [2, 3]));
      const op = { kind: "cross-entropy-grad", node: "loss.grad", attrs: {}, outShape: [2, 3, 5] };
      const e = failsUntouched(ex, op, [l, tv, undefined]);
      expect([e.code, e.subject]).toEqual(["input", "loss.grad.targets"]);
      expect(e.message).toBe(`loss.grad.targets: target out of range, expected target in [0, 5), got ${bad} at [1, 1]`);
      ex.release(tv);
    }
    // with an ignore index the message says so; a strided target's position is its logical one
    const tv = uploadView(ex, Tensor.int32([0, 1, 2, 7, -100, 4], [3, 2]).transpose(0, 1)); // [[0, 2, -100], [1, 7, 4]]
    const e = thrown(() =>
      ex.dispatch({
        kind: "cross-entropy-grad",
        node: "loss.grad",
        attrs: { ignoreIndex: -100, reduction: "sum" },
        inputs: [l, tv, undefined],
        outShape: [2, 3, 5],
      }),
    ) as Error;
    expect(e.message).toBe(
      "loss.grad.targets: target out of range, expected target in [0, 5) or -100 (ignored), got 7 at [1, 1]",
    );
    // the executor is still usable
    const lh = random([2, 3, 5], 6);
    const th = Tensor.int32([0, 1, 2, 3, 4, 4], [2, 3]);
    expectGrad(run(lh, th, "mean"), crossEntropyGradOf(lh, th, "mean", null));
    expect(ex.stats.traps).toBe(0);
  });

  it("shape and attribute errors name the field", () => {
    const call = (
      inputs: readonly (AnyTensor | undefined)[],
      attrs: Record<string, unknown> = { ignoreIndex: null, reduction: "mean" },
    ) => thrown(() => onWasm(ex, "cross-entropy-grad", attrs, inputs, [2, 5], "loss.grad")) as AttnGraphError;
    const l = random([2, 5], 1);
    const t = Tensor.int32([0, 1], [2]);
    for (const [inputs, attrs, code, field] of [
      [[random([5], 1), Tensor.int32([0], [])], undefined, "shape", "logits"],
      [[l, Tensor.int32([0, 1, 2], [3])], undefined, "shape", "targets"],
      [[l, t, random([2], 2)], undefined, "shape", "grad"], // mean: grad must be a scalar
      [[l, t, Tensor.from([1], [])], { ignoreIndex: null, reduction: "none" }, "shape", "grad"],
      [[l, t, random([3], 2)], { ignoreIndex: null, reduction: "none" }, "shape", "grad"],
      [[l, t], { ignoreIndex: 0.5, reduction: "mean" }, "attr", "ignoreIndex"],
      [[l, t], { ignoreIndex: null, reduction: "avg" }, "attr", "reduction"],
    ] as const) {
      const e = call(inputs, attrs);
      expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
      expect([e.code, e.subject]).toEqual([code, `loss.grad.${field}`]);
    }
    const e = thrown(() =>
      onWasm(
        ex,
        "cross-entropy-grad",
        { ignoreIndex: null, reduction: "mean" },
        [l, Tensor.from([0, 1], [2])],
        [2, 5],
        "loss.grad",
      ),
    ) as Error;
    expect(e.message).toMatch(/^loss\.grad\.targets: input 1 \(targets\) of op cross-entropy-grad has the wrong dtype/);
  });
});
