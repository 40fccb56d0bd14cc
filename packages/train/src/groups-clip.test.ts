// nanoGPT's training recipe through the trainer, against PyTorch (fixtures/groups-clip.json, made by
// fixtures/make_groups_clip.py in float64): AdamW with parameter groups (decay on rank >= 2 only, or groups listed by
// name with their own lr and decay), clip_grad_norm_ before each step, nanoGPT's warmup + cosine lr and its gradient
// accumulation (2 microbatches a step: the reported norm catches a missing 1 / n that clipping would hide), on the worked
// example's SimpleTransformer from the golden copy-task case's parameters. Losses, the reported gradient norms and the
// final parameters match on cpu, wasm and webgpu.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import type { Executor } from "@attngraph/graph";
import { loadStateDict, simpleTransformer } from "@attngraph/nn";
import { Tensor, compare } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adam } from "./optimizer.js";
import { nanoGPTGroups, type ParamGroup } from "./param-groups.js";
import { cosineSchedule } from "./schedule.js";
import { createTrainer, type StepEvent } from "./trainer.js";

interface Scenario {
  readonly lr: number;
  readonly groups: readonly {
    readonly names?: string[];
    readonly rank2?: boolean;
    readonly weight_decay: number;
    readonly lr?: number;
  }[];
  readonly clip: number;
  readonly schedule?: { readonly lr: number; readonly min_lr: number; readonly warmup: number; readonly decay: number };
  readonly steps: number;
  readonly batchSize: number;
  readonly stride: number;
  readonly accumulate?: number;
  readonly losses: number[];
  readonly gradNorms: number[];
  readonly lrs?: number[];
  readonly finalParams: Record<string, { shape: number[]; data: number[] }>;
}

const fixture = JSON.parse(readFileSync(new URL("../fixtures/groups-clip.json", import.meta.url), "utf8")) as {
  scenarios: Record<string, Scenario>;
};
const copy = loadAnyCase(join(goldenTrainDir, "seed-003-copy-task-v10-e32-h4-t8.json")).case as TrainCase;
/** The golden cases' loss tolerance (nanogpt-bias-l2's train section checks its losses within 1e-4). */
const LOSS_TOL = { abs: 1e-4, rel: 1e-4 };
/** Parameters after several clipped AdamW steps in float32 against float64. */
const PARAM_TOL = { abs: 2e-4, rel: 1e-3 };

function rows(from: number, n: number): Tensor<"int32"> {
  const t = copy.inputs["tokens"]!;
  const w = t.shape[1]!;
  return Tensor.int32(t.toInt32Array().subarray(from * w, (from + n) * w), [n, w]);
}

/** The scenario's groups in the trainer's terms: nanoGPTGroups for the rank rule, else the listed names. */
function groupsOf(s: Scenario): ParamGroup[] {
  if (s.groups.every((g) => g.rank2 !== undefined)) return nanoGPTGroups(s.groups.find((g) => g.rank2)!.weight_decay);
  return s.groups.map((g) => ({
    params: g.names!,
    weightDecay: g.weight_decay,
    ...(g.lr !== undefined ? { lr: g.lr } : {}),
  }));
}

async function train(s: Scenario, executor: Executor) {
  const cfg = copy.config as Record<string, number>;
  const graph = simpleTransformer(
    { vocabSize: cfg.vocabSize!, embedDim: cfg.embedDim!, nHeads: cfg.nHeads!, seqLen: cfg.seqLen! },
    { loss: true },
  );
  const sched = s.schedule;
  const trainer = await createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: s.lr, betas: [0.9, 0.95], eps: 1e-8, decoupled: true }),
    paramGroups: groupsOf(s),
    clipGradNorm: s.clip,
    ...(sched
      ? {
          schedule: cosineSchedule({
            lr: sched.lr,
            minLr: sched.min_lr,
            warmup: sched.warmup,
            decaySteps: sched.decay,
          }),
        }
      : {}),
    ...(s.accumulate ? { accumulate: s.accumulate } : {}),
    executors: [executor],
    weights: loadStateDict(graph, copy.params),
  });
  const events: StepEvent[] = [];
  trainer.steps$.subscribe((e) => events.push(e));
  const losses: number[] = [];
  for (let i = 0; i < s.steps; i++) {
    if (s.accumulate) {
      // The step's rows as n microbatches in order, as the fixture's torch loop splits them.
      const m = s.batchSize / s.accumulate;
      const micro = Array.from({ length: s.accumulate }, (_, k) => rows(i * s.stride + k * m, m)).map((tokens) => ({
        tokens,
        targets: tokens,
      }));
      losses.push(await trainer.step(micro));
    } else {
      const tokens = rows(i * s.stride, s.batchSize);
      losses.push(await trainer.step({ tokens, targets: tokens }));
    }
  }
  const params = await trainer.parameters();
  await trainer.dispose();
  return { losses, events, params };
}

const executors: [string, () => Executor][] = [
  ["cpu", () => createCpuExecutor()],
  ["wasm", () => createWasmExecutor()],
  ["webgpu", () => createWebGpuExecutor()],
];

describe.each(executors)(
  "AdamW with parameter groups, clip_grad_norm_ and a schedule, as PyTorch trains it (%s)",
  (_name, make) => {
    for (const [name, s] of Object.entries(fixture.scenarios)) {
      it(`${name}: ${s.steps} steps' losses, gradient norms${s.lrs ? ", lrs" : ""} and final parameters`, async () => {
        const executor = make();
        const { losses, events, params } = await train(s, executor);
        const r = compare(Tensor.from(losses, [losses.length]), s.losses, LOSS_TOL);
        expect(
          r.ok,
          `losses ${JSON.stringify(losses)} vs ${JSON.stringify(s.losses)}: ${JSON.stringify(r.worst)}`,
        ).toBe(true);
        const norms = events.map((e) => e.gradNorm!);
        const rn = compare(Tensor.from(norms, [norms.length]), s.gradNorms, LOSS_TOL);
        expect(rn.ok, `norms ${JSON.stringify(norms)}: ${JSON.stringify(rn.worst)}`).toBe(true);
        if (s.lrs) expect(events.map((e) => e.lr!)).toEqual(s.lrs.map((x) => expect.closeTo(x, 12)));
        for (const [p, want] of Object.entries(s.finalParams)) {
          const rp = compare(params.get(p)! as Tensor, want.data, PARAM_TOL);
          expect(rp.ok, `${p}: ${JSON.stringify(rp.worst)}`).toBe(true);
        }
        await (executor as { dispose?: () => unknown }).dispose?.();
      }, 300_000); // a hang guard: webgpu on SwiftShader, CI running every package's tests at once on 2 cores
    }
  },
);
