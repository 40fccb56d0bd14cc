// The training problems on every implementation that trains (attngraph cpu and wasm through the trainer; tfjs-cpu and
// tfjs-wasm with tfjs's autodiff, matMul gradients transposed or stock): the first step's loss against a float64
// reference (the forward), the second step's across implementations (two autodiffs and two Adams that share no code),
// and the runner contract the harness relies on (one step per run, `checked` = the first two losses).
import { describe, expect, it } from "vitest";
import {
  makeTrainBlockProblem,
  makeTrainCopyProblem,
  type TrainBlockProblem,
  type TrainCopyProblem,
} from "../problem.js";
import { referenceFirstLoss } from "../test-reference.js";
import { attngraphImpl, benchTrainModel } from "./attngraph.js";
import { ortNodeImpl, ortWebImpl } from "./ort.js";
import { tfjsImpl } from "./tfjs.js";
import type { Impl } from "./types.js";

const impls: Impl[] = [
  attngraphImpl("cpu"),
  attngraphImpl("wasm"),
  tfjsImpl("cpu"),
  tfjsImpl("wasm"),
  tfjsImpl("cpu", "stock"),
  tfjsImpl("wasm", "stock"),
];

/** Every implementation's first two losses, and what else the test looks at. */
async function lossesOf(p: TrainBlockProblem | TrainCopyProblem) {
  const out = new Map<string, { losses: number[]; runs: number[]; note?: string; plannedPeakBytes?: number }>();
  for (const impl of impls) {
    const runner = await impl.setup(p, { threads: 1 });
    try {
      // Three runs: each one step, each resolving to its own loss; `checked` then has the first two.
      const runs = [];
      for (let i = 0; i < 3; i++) {
        const r = await runner.run();
        expect(r).toHaveLength(1);
        runs.push(r[0]!);
      }
      const losses = [...(await runner.checked!())];
      out.set(impl.name, {
        losses,
        runs,
        ...(runner.note ? { note: runner.note } : {}),
        ...(runner.plannedPeakBytes !== undefined ? { plannedPeakBytes: runner.plannedPeakBytes } : {}),
      });
    } finally {
      await runner.dispose();
    }
  }
  return out;
}

const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);
/** |a − b| relative to the larger of |b| and 1: a loss that nearly cancels (sum(output ⊙ gradOutput)) is no finer than its terms. */
const relOrAbs = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1);

describe.each([
  ["train-block", () => makeTrainBlockProblem({ b: 2, t: 6, d: 8, h: 2 }, 3)],
  ["train-block", () => makeTrainBlockProblem({ b: 1, t: 5, d: 12, h: 3 }, 4)],
  ["train-copy", () => makeTrainCopyProblem(5)],
] as const)("%s", (_kind, make) => {
  it("every implementation's first loss matches the float64 reference, and its second (after one Adam step) every other's", async () => {
    const p = make();
    const ref = referenceFirstLoss(p);
    const all = await lossesOf(p);
    expect([...all.keys()]).toEqual(impls.map((i) => i.name));
    const [, first] = [...all][0]!;
    for (const [name, { losses, runs }] of all) {
      expect(relOrAbs(losses[0]!, ref), `${name} step 1: ${losses[0]} vs ${ref}`).toBeLessThan(1e-5);
      expect(relOrAbs(losses[1]!, first.losses[1]!), `${name} step 2: ${losses[1]} vs ${first.losses[1]}`).toBeLessThan(
        1e-5,
      );
      expect(losses[1]!).toBeLessThan(losses[0]!); // a descent step
      // Each run is one more step from where the previous one left off: the first two runs are the checked losses.
      expect(rel(runs[0]!, losses[0]!)).toBeLessThan(1e-6);
      expect(rel(runs[1]!, losses[1]!)).toBeLessThan(1e-6);
      expect(runs[2]!).toBeLessThan(runs[1]!);
    }
    for (const name of ["cpu", "wasm"]) expect(all.get(name)!.plannedPeakBytes).toBeGreaterThan(0);
    for (const name of ["tfjs-wasm", "tfjs-wasm-stock"]) {
      expect(all.get(name)!.note ?? "").toBe(p.kind === "train-copy" ? "embedding as one-hot matMul" : "");
    }
  }, 120_000);
});

describe("the attngraph training runner", () => {
  it("trains every parameter of the model, and plans an arena that holds the activations kept for the backward", async () => {
    const p = makeTrainBlockProblem({ b: 1, t: 16, d: 8, h: 2 }, 1);
    const { graph, loss, batch } = benchTrainModel(p);
    expect(loss).toBe("output");
    expect(Object.keys(batch).sort()).toEqual(["output.grad", "x"]);
    expect(graph.weights).toHaveLength(10);
    const forward = await attngraphImpl("cpu").setup({ ...p, kind: "block" }, { threads: 1 });
    const step = await attngraphImpl("cpu").setup(p, { threads: 1 });
    try {
      // The training step keeps (among others) the [T, T] attention weights per head and the 4·d MLP hidden
      // activations alive until their backward: its arena is larger than the forward's.
      expect(step.plannedPeakBytes).toBeGreaterThan(forward.plannedPeakBytes! + 2 * 16 * 16 * 4);
      expect(step.streams).toBeUndefined(); // no stream-overhead rows for a training step
    } finally {
      await forward.dispose();
      await step.dispose();
    }
    const copy = benchTrainModel(makeTrainCopyProblem());
    expect(copy.loss).toBe("loss");
    expect(copy.graph.weights.map((w) => w.name)).toHaveLength(14);
    expect(copy.batch["tokens"]!.shape).toEqual([32, 8]);
  });
});

describe("onnxruntime", () => {
  it("does not train: unsupported for the training problems, so a default run leaves it out", async () => {
    for (const impl of [ortWebImpl, ortNodeImpl]) {
      expect(impl.unsupported?.("train-block")).toMatch(/inference only/);
      expect(impl.unsupported?.("block")).toBeUndefined();
      await expect(impl.setup(makeTrainCopyProblem(), { threads: 1 })).rejects.toThrow(/inference only/);
    }
    expect(tfjsImpl("wasm", "stock").unsupported?.("attention")).toMatch(/training problems only/);
    expect(tfjsImpl("wasm", "stock").onlyWhenNamed).toBe(true);
    expect(tfjsImpl("wasm").unsupported?.("train-block")).toBeUndefined(); // only decode is unsupported (peers.test.ts)
    expect(tfjsImpl("wasm").onlyWhenNamed).toBeUndefined();
  });
});
