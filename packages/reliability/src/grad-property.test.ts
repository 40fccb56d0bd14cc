// The fused attention backward against the unfused one: random attention cases (GQA/MQA, causal, window, cross, key
// padding with rows that see no key, dropout in training, fused QKV), differentiated by grad() with respect to the
// inputs and every weight. Each executor's fused plan (attention + attention-lse + attention-grad, no [L, S] value) must
// give the gradients cpu gives without fusion (the rules' unfused chain), within float32 tolerance.
import { buildAttention } from "@attngraph/attention";
import { grad } from "@attngraph/autodiff";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { Executor, OpGraph } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { withPlantedError } from "@attngraph/testkit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attentionCases, describeCase, materialize, type AttentionCase, type Materialized } from "./cases.js";
import { dense, mismatch } from "./check.js";
import { executors } from "./executors.js";
import { prng, uniform } from "./prng.js";
import { fcSettings } from "./settings.js";

interface GradCase {
  readonly m: Materialized;
  readonly graph: OpGraph;
  readonly grads: readonly string[];
  readonly feeds: Record<string, Tensor>;
}

/** The case's graph in training mode (dropout active when the config has one), its gradient graph and feeds. */
function gradCase(c: AttentionCase): GradCase {
  const m = materialize(c);
  const forward = buildAttention(c.config, {
    fusedQkv: c.fusedQkv,
    keyPaddingMask: c.padding,
    training: true,
    seed: c.seed,
  });
  const wrt = [
    ...forward.inputs.filter((i) => i.name !== "keyPaddingMask").map((i) => i.name),
    ...forward.weights.map((w) => w.name),
  ];
  const g = grad(forward, { loss: forward.outputs[0]!, wrt });
  const out = forward.shapeOf(forward.outputs[0]!);
  const shape = [c.B, c.T, out[out.length - 1] as number];
  const feeds = {
    ...m.inputs,
    [g.seed!]: new Tensor(uniform(shape[0]! * shape[1]! * shape[2]!, 1, prng(c.seed + 1)), shape),
  };
  return { m, graph: g.graph, grads: wrt.map((w) => g.grads[w]!), feeds };
}

/** Runs the gradient graph once; returns every gradient and whether the plan used the fused backward. */
async function runGrads(
  gc: GradCase,
  executor: Executor,
  fusion: boolean,
): Promise<{ grads: Map<string, Tensor>; fusedBackward: boolean }> {
  const session = await compile(gc.graph, { executors: [executor], weights: gc.m.weights, fusion });
  try {
    const out = await session.run(gc.feeds);
    return {
      grads: new Map(gc.grads.map((n) => [n, out[n]!])),
      fusedBackward: session.plan.steps.some((s) => s.kind === "attention-grad"),
    };
  } finally {
    await session.dispose();
  }
}

/** Disagreements of `executor`'s fused backward with cpu's unfused one on one case. */
async function compareFused(c: AttentionCase, name: string, executor: Executor, cpu: Executor): Promise<string[]> {
  const gc = gradCase(c);
  const base = await runGrads(gc, cpu, false);
  const got = await runGrads(gc, executor, true);
  const problems: string[] = [];
  if (!got.fusedBackward) problems.push("the plan did not use the fused attention backward");
  if (base.fusedBackward) problems.push("the unfused plan used the fused attention backward");
  for (const n of gc.grads) {
    const want = dense(base.grads.get(n)!);
    const p = mismatch(`${n} (${name} fused vs cpu unfused)`, dense(got.grads.get(n)!), want, {
      abs: 1e-4 * (1 + maxAbs(want.data)),
      rel: 1e-4,
    });
    if (p) problems.push(p);
  }
  return problems.map((p) => `${p}\n  case: ${describeCase(c)}`);
}

function fusedProperty(name: string, executor: Executor, cpu: Executor) {
  return fc.asyncProperty(attentionCases(60_000), async (c) => {
    const problems = await compareFused(c, name, executor, cpu);
    if (problems.length) throw new Error(problems.join("\n"));
  });
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: fused attention backward", (name, entry) => {
  it("equals the unfused backward on cpu: every input and weight gradient, on random cases", async () => {
    const cpu = createCpuExecutor();
    const { numRuns, ...rest } = fcSettings(60);
    await fc.assert(fusedProperty(name, await entry.create(), cpu), {
      ...rest,
      numRuns: Math.max(1, Math.round(numRuns * (entry.propertyShare ?? 1))),
    });
  });
});

describe("the fused backward property can fail", () => {
  it("catches a planted error of 1e-3 in one element of attention-grad's output", async () => {
    const cpu = createCpuExecutor();
    const mutant = withPlantedError(cpu, "attention-grad", 1e-3);
    const err = await fc.assert(fusedProperty("mutant", mutant, cpu), { ...fcSettings(30), seed: 1, numRuns: 30 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/\.grad \(mutant fused vs cpu unfused\)/);
  });
});

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}
