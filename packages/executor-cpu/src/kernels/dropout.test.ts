import { describe, expect, it } from "vitest";
import * as graph from "@attngraph/graph";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { referenceDropout } from "@attngraph/testkit";
import { dropoutBits, dropoutImpl, dropoutKeep, dropoutThreshold, fmix32 } from "./dropout.js";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const run = (x: Tensor, attrs: Record<string, unknown>) =>
  cpu.dispatch({ kind: "dropout", node: "weights", attrs, inputs: [x], outShape: x.shape });

const ones = (n: number) => new Tensor(new Float32Array(n).fill(1), [n]);

describe("dropout generator", () => {
  // The generator is tested where it lives (graph/src/ops/dropout-hash.test.ts, against a BigInt implementation);
  // here only that this package re-exports it instead of keeping a copy a fix would have to repeat.
  it("is the graph package's, re-exported", () => {
    expect(dropoutBits).toBe(graph.dropoutBits);
    expect(dropoutKeep).toBe(graph.dropoutKeep);
    expect(dropoutThreshold).toBe(graph.dropoutThreshold);
    expect(fmix32).toBe(graph.fmix32);
  });
});

describe("dropout kernel", () => {
  it("is the identity in eval mode and at rate 0", () => {
    const x = Tensor.from([1, 2, 3], [3]);
    expect(run(x, { rate: 0.5, seed: 1, training: false })).toBe(x);
    expect(run(x, { rate: 0, seed: 1, training: true })).toBe(x);
  });

  it.each([
    [9, 0.3],
    [0, 0.5],
    [0xffffffff, 0.1],
    [0x80000000, 0.9],
  ])("equals the testkit's independent float64 reference bit for bit (seed %s, rate %s)", (seed, rate) => {
    const vals = Array.from({ length: 4096 }, (_, i) => (i % 97) / 7 - 3);
    const y = run(Tensor.from(vals, [64, 64]), { rate, seed, training: true }).toFloat32Array();
    const want = referenceDropout(vals, seed, rate);
    const first = y.findIndex((v, i) => !Object.is(v, want[i]));
    expect(first, `first element that differs: ${first}`).toBe(-1);
    expect(y.some((v) => v === 0) && y.some((v) => v !== 0)).toBe(true);
  });

  it("indexes by the row-major position in the output, also for a strided input", () => {
    const base = Tensor.from(
      Array.from({ length: 12 }, (_, i) => i + 1),
      [3, 4],
    );
    const t = base.transpose(0, 1); // [4, 3]
    const got = dropoutImpl(t, 0.5, 3);
    const want = dropoutImpl(t.contiguous(), 0.5, 3);
    expect(Array.from(got)).toEqual(Array.from(want));
  });

  it("gives the same mask for the same seed and a different one for another seed", () => {
    const x = ones(1000);
    const a = run(x, { rate: 0.5, seed: 123, training: true }).toArray();
    const b = run(x, { rate: 0.5, seed: 123, training: true }).toArray();
    const c = run(x, { rate: 0.5, seed: 124, training: true }).toArray();
    expect(a).toEqual(b);
    const differing = a.filter((v, i) => v !== c[i]).length;
    expect(differing).toBeGreaterThan(400); // about half differ for independent masks at rate 0.5
  });

  it.each([0.1, 0.5, 0.9])("keeps a fraction within 5 standard deviations of 1 − %s and preserves the mean", (rate) => {
    const n = 100_000;
    const y = run(ones(n), { rate, seed: 2024, training: true }).toArray();
    const kept = y.filter((v) => v !== 0).length;
    const sd = Math.sqrt(n * rate * (1 - rate));
    expect(Math.abs(kept - n * (1 - rate))).toBeLessThan(5 * sd);
    // Each output is Bernoulli(1 − rate) · 1/(1 − rate): mean 1, standard error sqrt(rate / (1 − rate) / n).
    const mean = y.reduce((s, v) => s + v, 0) / n;
    expect(Math.abs(mean - 1)).toBeLessThan(4 * Math.sqrt(rate / (1 - rate) / n));
  });

  it("rejects rate 1 and a seed outside uint32 with attr errors naming the node", () => {
    const x = ones(4);
    expect(() => run(x, { rate: 1, seed: 0, training: true })).toThrow(AttnGraphError);
    expect(() => run(x, { rate: 1, seed: 0, training: true })).toThrow(/weights\.rate/);
    expect(() => run(x, { rate: 0.5, seed: -1, training: true })).toThrow(/weights\.seed/);
    expect(() => run(x, { rate: 0.5, seed: 1.5, training: true })).toThrow(/weights\.seed/);
  });
});
