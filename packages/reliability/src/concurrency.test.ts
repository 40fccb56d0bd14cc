// Many runs on one session at once: each returns its own result (bit for bit what it returns alone, so no scratch
// buffer or arena is shared between runs in flight), and taps deliver each run's tensors under its own run id.
import { normalizeConfig } from "@attngraph/attention";
import { compile, type Session, type TapEvent } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { materialize } from "./cases.js";
import { executors } from "./executors.js";

const config = normalizeConfig({
  dIn: 8,
  dOut: 16,
  numHeads: 4,
  numKvHeads: 2,
  causal: true,
  window: 5,
  qkvBias: true,
});

/** 50 inputs of 1..20 tokens (so runs differ in shape, binding and arena as well as in numbers). */
function inputsFor(n: number): Record<string, Tensor>[] {
  return Array.from(
    { length: n },
    (_, i) =>
      materialize({
        config,
        fusedQkv: false,
        B: 1 + (i % 2),
        T: 1 + ((i * 7) % 20),
        S: 1 + ((i * 7) % 20),
        padding: false,
        magnitude: 1,
        seed: 100 + i,
      }).inputs,
  );
}

/** Starts a run and returns its id: run ids are handed out synchronously, in call order, with run-start. */
function start(
  s: Session,
  inputs: Record<string, Tensor>,
  signal?: AbortSignal,
): { id: number; done: Promise<Record<string, Tensor>> } {
  let id = -1;
  const sub = s.events$.subscribe((e) => e.type === "run-start" && id < 0 && (id = e.runId));
  const done = s.run(inputs, signal ? { signal } : {});
  sub.unsubscribe();
  return { id, done };
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: concurrent runs on one session", (_name, entry) => {
  it("50 runs at once (with and without signals, taps coming and going) each return their own result and taps", async () => {
    const m = materialize({ config, fusedQkv: false, B: 1, T: 1, S: 1, padding: false, magnitude: 1, seed: 1 });
    const s = await compile(m.graph, { executors: [await entry.create()], weights: m.weights });
    const inputs = inputsFor(50);
    // Alone, one after another: the results every concurrent run must reproduce exactly.
    const alone: { output: number[]; weights: number[]; context: number[] }[] = [];
    for (const x of inputs) {
      const got: Record<string, number[]> = {};
      const sub = s.tap(["weights", "context"]).subscribe((e) => (got[e.node] = e.tensor.toArray()));
      const out = await s.run(x);
      sub.unsubscribe();
      alone.push({ output: out.output!.toArray(), weights: got.weights!, context: got.context! });
    }

    const early: TapEvent[] = [];
    const late: TapEvent[] = [];
    const quitter: TapEvent[] = [];
    const subEarly = s.tap(["weights", "context"]).subscribe((e) => early.push(e));
    const subQuitter = s.tap("weights").subscribe((e) => quitter.push(e));
    let subLate: { unsubscribe(): void } | undefined;
    const runs: { id: number; i: number; done: Promise<Record<string, Tensor>> }[] = [];
    inputs.forEach((x, i) => {
      if (i === 25) subLate = s.tap("weights").subscribe((e) => late.push(e)); // sees runs started from here on
      const run = start(s, x, i % 3 === 0 ? new AbortController().signal : undefined);
      runs.push({ ...run, i });
      if (i === 40) subQuitter.unsubscribe(); // gone before any run finished: it gets nothing, not even pending events
    });
    const results = await Promise.all(runs.map((r) => r.done));
    subLate!.unsubscribe();
    subEarly.unsubscribe();

    const idOf = new Map(runs.map((r) => [r.id, r.i]));
    results.forEach((r, k) => expect(r.output!.toArray(), `run ${runs[k]!.id}`).toEqual(alone[runs[k]!.i]!.output));
    // Every tapped run's tensors reached the subscriber under its own id, once each, and equal to the run alone.
    expect(early.length).toBe(2 * 50);
    for (const e of early) {
      const i = idOf.get(e.runId)!;
      expect(e.tensor.toArray(), `${e.node} of run ${e.runId}`).toEqual(alone[i]![e.node as "weights" | "context"]);
    }
    expect(new Set(early.map((e) => `${e.runId}:${e.node}`)).size).toBe(early.length);
    expect(late.map((e) => idOf.get(e.runId)).sort((a, b) => a! - b!)).toEqual(
      Array.from({ length: 25 }, (_, k) => 25 + k),
    );
    for (const e of late) expect(e.tensor.toArray()).toEqual(alone[idOf.get(e.runId)!]!.weights);
    expect(quitter).toEqual([]);
  });

  it("a run that fails (bad input) in the middle of others fails alone", async () => {
    const m = materialize({ config, fusedQkv: false, B: 1, T: 1, S: 1, padding: false, magnitude: 1, seed: 1 });
    const s = await compile(m.graph, { executors: [await entry.create()], weights: m.weights });
    const inputs = inputsFor(10);
    const alone = [];
    for (const x of inputs) alone.push((await s.run(x)).output!.toArray());
    const bad = {
      x: materialize({
        config: normalizeConfig({ ...config, dIn: 7 }),
        fusedQkv: false,
        B: 1,
        T: 3,
        S: 3,
        padding: false,
        magnitude: 1,
        seed: 1,
      }).inputs.x!,
    };
    const all = await Promise.allSettled([...inputs.slice(0, 5), bad, ...inputs.slice(5)].map((x) => s.run(x)));
    expect(all[5]!.status).toBe("rejected");
    const ok = all
      .filter((_r, k) => k !== 5)
      .map((r) => (r as PromiseFulfilledResult<Record<string, Tensor>>).value.output!.toArray());
    expect(ok).toEqual(alone);
  });
});
