// The worked example's training loop through the trainer: from the golden case's initial parameters, 50 Adam steps on
// the first 32 samples reproduce PyTorch's losses (float64) within the case's tolerance; a failed or aborted step
// changes nothing; bad options are typed errors.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { Executor } from "@attngraph/graph";
import { loadStateDict, simpleTransformer } from "@attngraph/nn";
import { Tensor, compare } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adam } from "./optimizer.js";
import { createTrainer } from "./trainer.js";

const copy = loadAnyCase(join(goldenTrainDir, "seed-003-copy-task-v10-e32-h4-t8.json")).case as TrainCase;

function firstRows(name: string, n: number): Tensor<"int32"> {
  const t = copy.inputs[name]!;
  return Tensor.int32(t.toInt32Array().subarray(0, n * t.shape[1]!), [n, t.shape[1]!]);
}

async function trainCopy(executors: readonly Executor[], steps: number, fusion = true) {
  const cfg = copy.config as Record<string, number>;
  const spec = copy.training!;
  const graph = simpleTransformer(
    { vocabSize: cfg.vocabSize!, embedDim: cfg.embedDim!, nHeads: cfg.nHeads!, seqLen: cfg.seqLen! },
    { loss: true },
  );
  const trainer = await createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: spec.lr, betas: spec.betas, eps: spec.eps, weightDecay: spec.weightDecay }),
    executors,
    weights: loadStateDict(graph, copy.params),
    fusion,
  });
  const batch = { tokens: firstRows("tokens", spec.batchSize), targets: firstRows("targets", spec.batchSize) };
  const losses: number[] = [];
  for (let i = 0; i < steps; i++) losses.push(await trainer.step(batch));
  return { trainer, losses, batch };
}

describe("trainer: the copy task with Adam", () => {
  it("reproduces the golden case's 50 losses on cpu", async () => {
    const spec = copy.training!;
    const { trainer, losses } = await trainCopy([createCpuExecutor()], spec.steps);
    const r = compare(Tensor.from(losses, [losses.length]), copy.expected["losses"]!, copy.tolerance);
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
    expect(losses[spec.steps - 1]!).toBeLessThan(0.5);
    expect(trainer.steps).toBe(spec.steps);
    await trainer.dispose();
  }, 120_000);

  it("runs attention with the fused backward (no [B, H, T, T] value in the step), with the unfused rules' losses", async () => {
    const fused = await trainCopy([createCpuExecutor()], 5);
    const plan = fused.trainer.explain();
    expect(plan).toMatch(
      /pass attention backward fusion: fused transformer\.attention\.context\.heads: forward → attention \+ transformer\.attention\.context\.heads\.lse; .*q\.heads\.grad → attention-grad \(q\).*k\.heads\.grad → attention-grad \(k\).*v\.heads\.grad → attention-grad \(v\)/,
    );
    // No step of the plan makes a [B, H, T, T] value, forward or backward (the ops that do are all gone).
    const lsKinds = ["score", "mask", "softmax", "dropout", "softmax-grad", "mask-grad"];
    expect(fused.trainer.session.plan.steps.filter((s) => lsKinds.includes(s.kind)).map((s) => s.node)).toEqual([]);
    const unfused = await trainCopy([createCpuExecutor()], 5, false);
    expect(unfused.trainer.explain()).not.toMatch(/attention-grad/);
    const r = compare(Tensor.from(fused.losses, [5]), unfused.losses, { abs: 1e-5, rel: 1e-5 });
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
    await fused.trainer.dispose();
    await unfused.trainer.dispose();
  }, 60_000);

  it("a step that fails leaves the parameters as they were; the next one goes on", async () => {
    const { trainer, batch } = await trainCopy([createCpuExecutor()], 1);
    const before = await trainer.parameters();
    const bad = Tensor.int32(
      batch.targets.toInt32Array().map((v, i) => (i === 3 ? 99 : v)),
      batch.targets.shape,
    );
    await expect(trainer.step({ ...batch, targets: bad })).rejects.toThrow(/target/);
    const after = await trainer.parameters();
    for (const [name, t] of before)
      expect(compare(after.get(name)! as Tensor, t as Tensor, { abs: 0, rel: 0 }).ok, name).toBe(true);
    expect(trainer.steps).toBe(1);
    const aborted = new AbortController();
    aborted.abort(new Error("stop"));
    await expect(trainer.step(batch, { signal: aborted.signal })).rejects.toThrow(/aborted/);
    expect(trainer.steps).toBe(1);
    expect(await trainer.step(batch)).toBeGreaterThan(0);
    await trainer.dispose();
  }, 60_000);

  it("bad optimizer options and an unknown loss are typed errors naming the field", async () => {
    expect(() => adam({ lr: 0 })).toThrow(/adam\.lr: invalid optimizer option, expected a finite number > 0, got 0/);
    expect(() => adam({ lr: Number.NaN })).toThrow(/adam\.lr/);
    expect(() => adam({ lr: 1e-3, betas: [0.9, 1] })).toThrow(/adam\.betas/);
    const graph = simpleTransformer({ vocabSize: 5, embedDim: 4, nHeads: 1, seqLen: 2 }, { loss: true });
    await expect(
      createTrainer(graph, {
        loss: "nope",
        optimizer: adam({ lr: 1e-3 }),
        executors: [createCpuExecutor()],
        weights: {},
      }),
    ).rejects.toThrow(/train\.loss: the loss must be a node of the graph/);
  });
});

describe("trainer streams and explain", () => {
  it("events$ interleaves step events with the session's; explain() shows the update nodes and grad()'s notes", async () => {
    const graph = simpleTransformer({ vocabSize: 5, embedDim: 4, nHeads: 1, seqLen: 3 }, { loss: true });
    const { defaultInit } = await import("@attngraph/nn");
    const trainer = await createTrainer(graph, {
      loss: "loss",
      optimizer: adam({ lr: 1e-2 }),
      executors: [createCpuExecutor()],
      weights: defaultInit(graph, 1),
    });
    const types: string[] = [];
    trainer.events$.subscribe((e) => types.push(e.type));
    const tokens = Tensor.int32([1, 2, 3, 4, 0, 1], [2, 3]);
    const loss = await trainer.step({ tokens, targets: tokens });
    expect(types[0]).toBe("run-start");
    expect(types.at(-1)).toBe("step");
    expect(types).toContain("run-end");
    expect(loss).toBeGreaterThan(0);
    const plan = trainer.explain();
    expect(plan).toMatch(/output\.weight\.next\s+adam-step/);
    expect(plan).toMatch(/kept after the run \(not in an arena\): .*embed\.weight\.next/);
    await trainer.dispose();
  });
});

describe("a non-scalar loss", () => {
  it("takes its upstream gradient with each batch and resolves to sum(loss ⊙ seed); SGD-like descent lowers it", async () => {
    const { transformerBlock, defaultInit } = await import("@attngraph/nn");
    const graph = transformerBlock({ embedDim: 8, nHeads: 2, mlpRatio: 2 });
    const trainer = await createTrainer(graph, {
      loss: "output",
      optimizer: adam({ lr: 1e-2 }),
      executors: [createCpuExecutor()],
      weights: defaultInit(graph, 2),
    });
    expect(trainer.training.seed).toBe("output.grad");
    const x = Tensor.from(
      Array.from({ length: 2 * 3 * 8 }, (_, i) => Math.sin(i)),
      [2, 3, 8],
    );
    const seed = Tensor.from(
      Array.from({ length: 2 * 3 * 8 }, (_, i) => Math.cos(i * 0.7)),
      [2, 3, 8],
    );
    const first = await trainer.step({ x, "output.grad": seed });
    let last = first;
    for (let i = 0; i < 5; i++) last = await trainer.step({ x, "output.grad": seed });
    expect(last).toBeLessThan(first);
    await trainer.dispose();
  });
});

describe("trainer bookkeeping", () => {
  it("steps called together take turns and are numbered in order; a parameter the loss does not reach is left alone", async () => {
    const { GraphBuilder } = await import("@attngraph/graph");
    const b = new GraphBuilder();
    const tokens = b.input("tokens", ["B", 2], "int32");
    const logits = b.add("embedding", "logits", { ids: tokens, weight: b.weight("table", [3, 3]) });
    b.weight("unused", [2]);
    const loss = b.add("cross-entropy", "loss", { logits, targets: tokens });
    const graph = b.output(loss).build();
    const unused = Tensor.from([1, -1], [2]);
    const trainer = await createTrainer(graph, {
      loss: "loss",
      optimizer: adam({ lr: 0.1, weightDecay: 0.5, decoupled: true }),
      executors: [createCpuExecutor()],
      weights: { table: Tensor.zeros([3, 3]), unused },
    });
    const batch = { tokens: Tensor.int32([0, 1, 2, 0], [2, 2]) };
    const seen: number[] = [];
    trainer.steps$.subscribe((e) => seen.push(e.step));
    const losses = await Promise.all([trainer.step(batch), trainer.step(batch), trainer.step(batch)]);
    expect(seen).toEqual([1, 2, 3]);
    expect(losses[2]!).toBeLessThan(losses[0]!);
    expect((await trainer.parameters()).get("unused")!.toArray()).toEqual([1, -1]);
    expect(trainer.explain()).toMatch(/grad: unused does not reach loss/);
    await trainer.dispose();
  });
});
