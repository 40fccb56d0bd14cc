import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { softmaxImpl } from "./softmax.js";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const run = (x: Tensor, scale = 1) =>
  cpu.dispatch({ kind: "softmax", node: "weights", attrs: { scale }, inputs: [x], outShape: x.shape });

describe("softmax kernel", () => {
  it("matches a hand-computed row", () => {
    // exp([0, 1, 2]) / sum = [1, e, e²] / (1 + e + e²)
    const z = 1 + Math.E + Math.E ** 2;
    const y = run(Tensor.from([1, 2, 3], [1, 3]));
    expect(y.shape).toEqual([1, 3]);
    const got = y.toArray();
    [1 / z, Math.E / z, Math.E ** 2 / z].forEach((v, i) => expect(got[i]).toBeCloseTo(v, 6));
  });

  it("applies the scale before the softmax", () => {
    // softmax(0.5 · [0, 2]) = softmax([0, 1])
    const got = run(Tensor.from([0, 2], [2]), 0.5).toArray();
    expect(got[0]).toBeCloseTo(1 / (1 + Math.E), 6);
    expect(got[1]).toBeCloseTo(Math.E / (1 + Math.E), 6);
  });

  it("does not overflow on scores around 1000", () => {
    const got = run(Tensor.from([1000, 1001, 999, -1000], [4])).toArray();
    const z = Math.exp(-1) + 1 + Math.exp(-2);
    expect(got.every(Number.isFinite)).toBe(true);
    expect(got[0]).toBeCloseTo(Math.exp(-1) / z, 6);
    expect(got[1]).toBeCloseTo(1 / z, 6);
    expect(got[3]).toBe(0);
  });

  it("gives masked entries exactly 0 and a fully masked row exactly zeros", () => {
    const x = Tensor.from([-Infinity, 0, -Infinity, 0, -Infinity, -Infinity, -Infinity, -Infinity], [2, 4]);
    const got = run(x, 0.125).toArray();
    expect(got.slice(0, 4)).toEqual([0, 0.5, 0, 0.5]);
    expect(got.slice(4)).toEqual([0, 0, 0, 0]);
    expect(got.some(Number.isNaN)).toBe(false);
  });

  it("treats −∞ as masked even with scale 0 (0 · −∞ would be NaN)", () => {
    expect(run(Tensor.from([-Infinity, 3, 5], [3]), 0).toArray()).toEqual([0, 0.5, 0.5]);
  });

  it("propagates NaN through its row only", () => {
    const got = run(Tensor.from([1, NaN, 2, 1, 2, 3], [2, 3])).toArray();
    expect(got.slice(0, 3).every(Number.isNaN)).toBe(true);
    expect(got.slice(3).some(Number.isNaN)).toBe(false);
    expect(got.slice(3).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });

  it("reads a transposed (strided) input without copying it first", () => {
    const base = Tensor.from([1, 5, 2, 6, 3, 7], [3, 2]); // rows of the transpose: [1, 2, 3] and [5, 6, 7]
    const t = base.transpose(0, 1);
    expect(t.isContiguous()).toBe(false);
    const strided = softmaxImpl(t, 1);
    const dense = softmaxImpl(t.contiguous(), 1);
    expect(Array.from(strided)).toEqual(Array.from(dense));
    // The rows differ by a constant shift, so their softmax is equal.
    expect(Array.from(strided.subarray(0, 3))).toEqual(Array.from(strided.subarray(3)));
  });

  it("does not mutate its input", () => {
    const x = Tensor.from([1, 2, 3], [3]);
    run(x);
    expect(x.toArray()).toEqual([1, 2, 3]);
  });

  it("rejects a missing or non-finite scale with an attr error naming the node", () => {
    const x = Tensor.from([1, 2], [2]);
    const bad = () =>
      cpu.dispatch({ kind: "softmax", node: "weights", attrs: { scale: Infinity }, inputs: [x], outShape: x.shape });
    expect(bad).toThrow(AttnGraphError);
    expect(bad).toThrow(/weights\.scale/);
  });

  it("names node and slot when the input is missing", () => {
    try {
      cpu.dispatch({ kind: "softmax", node: "weights", attrs: { scale: 1 }, inputs: [], outShape: [2] });
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e) && e.code).toBe("input");
      expect((e as AttnGraphError).subject).toBe("weights.x");
    }
  });
});
