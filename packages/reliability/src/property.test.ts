// Property tests: random attention cases (every config key, GQA/MQA, masks, padding, sizes 1..64) on every executor,
// against the float64 reference and against each other. fast-check's seed is fixed (CI sees the same cases every
// time); ATTNGRAPH_FC_SEED / ATTNGRAPH_FC_RUNS explore more. On failure fast-check prints the shrunk case, and the
// error inside names the config, the tensor and the worst element.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { Executor } from "@attngraph/graph";
import { withPlantedError } from "@attngraph/testkit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attentionCases, describeCase, materialize, type AttentionCase } from "./cases.js";
import { checkCase, dense, mismatch, runCase, TOL } from "./check.js";
import { executors } from "./executors.js";
import { fcSettings } from "./settings.js";

function referenceProperty(name: string, executor: Executor) {
  return fc.asyncProperty(attentionCases(), async (c: AttentionCase) => {
    const problems = await checkCase(c, name, executor);
    if (problems.length) throw new Error(problems.join("\n"));
  });
}

describe.each(executors.map((e) => [e.name, e] as const))("%s against the float64 reference", (name, entry) => {
  it("untapped (fused) and tapped (unfused) runs: output and every tapped tensor within tolerance", async () => {
    const { numRuns, ...rest } = fcSettings(300);
    await fc.assert(referenceProperty(name, await entry.create()), {
      ...rest,
      numRuns: Math.max(1, Math.round(numRuns * (entry.propertyShare ?? 1))),
    });
  });
});

describe("executors against each other", () => {
  // Every executor, fused and unfused, against the first executor's fused run. With cpu alone this compares its two
  // lowerings (the streaming attention kernel against the unfused chain); each new executor adds two rows.
  it("every executor × {fused, unfused} agrees with the first executor's fused output", async () => {
    const made = await Promise.all(executors.map(async (e) => [e.name, await e.create()] as const));
    await fc.assert(
      fc.asyncProperty(attentionCases(), async (c) => {
        const m = materialize(c);
        const [firstName, first] = made[0]!;
        const base = dense((await runCase(m, first, false)).output);
        const problems: string[] = [];
        for (const [name, ex] of made) {
          for (const fusion of [true, false]) {
            if (ex === first && fusion) continue;
            const got = dense((await runCase(m, ex, false, fusion)).output);
            // Both sides are float32: twice the reference tolerance (each may be off by one tolerance the other way).
            const p = mismatch(`${name} ${fusion ? "fused" : "unfused"} vs ${firstName} fused`, got, base, {
              abs: 2 * TOL * (1 + maxAbs(base.data)),
              rel: 2 * TOL,
            });
            if (p) problems.push(p);
          }
        }
        if (problems.length) throw new Error(`${problems.join("\n")}\n  case: ${describeCase(c)}`);
      }),
      fcSettings(100),
    );
  });
});

describe("the property can fail", () => {
  it("catches a planted error of 1e-3 in one projection element, shrinks the case, and names its config", async () => {
    const cpu = createCpuExecutor();
    // A cpu executor whose projections are wrong by 1e-3 in their first element: the kind of slip a new kernel makes.
    const mutant = withPlantedError(cpu, "projection", 1e-3);
    // What CI would print: fc.assert's error carries the shrunk counterexample and the property's own message.
    const err = await fc.assert(referenceProperty("mutant", mutant), { ...fcSettings(50), seed: 1, numRuns: 50 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const report = (err as Error).message;
    expect(report).toMatch(/Counterexample: \[\{"config":\{"dIn":\d+,"dOut":\d+,"numHeads":\d+/); // the whole config
    expect(report).toMatch(/Shrunk \d+ time/);
    expect(report).toMatch(/mutant: (tap queries|output \(untapped, fused\))/); // the tensor at fault...
    expect(report).toMatch(/case: \{"dIn"/); // ...and the config again, in the property's message
    const shrunk = JSON.parse(/Counterexample: \[(.*)\]\n/.exec(report)![1]!) as AttentionCase;
    expect(shrunk.B * shrunk.T * shrunk.config.dIn).toBeLessThanOrEqual(4); // shrunk to a tiny case
  });
});

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}
