// Cancellation: an aborted run rejects with an AbortError within a step of the abort (not at the end), emits
// run-cancelled, leaves the session usable and the next run correct; runs in flight beside it are untouched.
import { normalizeConfig } from "@attngraph/attention";
import { AbortError, compile, type SessionEvent } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { materialize } from "./cases.js";
import { executors } from "./executors.js";

const config = normalizeConfig({ dIn: 16, dOut: 16, numHeads: 4, causal: true, qkvBias: true });
const caseOf = (T: number, seed: number) =>
  materialize({ config, fusedQkv: false, B: 2, T, S: T, padding: true, magnitude: 1, seed });

describe.each(executors.map((e) => [e.name, e] as const))("%s: cancellation", (_name, entry) => {
  async function session() {
    const m = caseOf(8, 1);
    // fusion off: more, smaller steps, so "how many steps ran after the abort" means something.
    return { m, s: await compile(m.graph, { executors: [await entry.create()], weights: m.weights, fusion: false }) };
  }

  it("abort from another task mid-run: rejects with an AbortError before the next step; run-cancelled; next run correct", async () => {
    const { m, s } = await session();
    const expected = (await s.run(m.inputs)).output!.toArray();
    const steps = s.plan.steps.length;
    const events: (SessionEvent & { at: number })[] = [];
    s.events$.subscribe((e) => events.push({ ...e, at: performance.now() }));
    const ac = new AbortController();
    let abortedAt = Infinity;
    // Abort from outside the run (a task of its own, as a UI event handler would), once the run is a few steps in.
    const sub = s.events$.subscribe((e) => {
      if (e.type === "node-end" && e.runId === 2 && e.node === "values")
        setImmediate(() => ((abortedAt = performance.now()), ac.abort(new Error("user"))));
    });
    const t0 = performance.now();
    const err = await s.run(m.inputs, { signal: ac.signal }).catch((e: unknown) => e);
    const ms = performance.now() - t0;
    sub.unsubscribe();
    expect(err).toBeInstanceOf(AbortError);
    expect((err as Error).name).toBe("AbortError");
    expect((err as Error).cause).toEqual(new Error("user"));
    const mine = events.filter((e) => e.runId === 2);
    const afterAbort = mine.filter((e) => e.type === "node-start" && e.at > abortedAt);
    expect(afterAbort).toEqual([]); // the run yields between steps, so it sees the abort before starting another
    const ran = mine.filter((e) => e.type === "node-end").length;
    expect(ran).toBeLessThan(steps); // stopped before the end
    const next = s.plan.steps[s.plan.steps.findIndex((st) => st.node === "values") + 1]!.node;
    expect(mine.at(-1)).toMatchObject({ type: "run-cancelled", runId: 2, node: next });
    expect(ms).toBeLessThan(1_000);
    expect((await s.run(m.inputs)).output!.toArray()).toEqual(expected);
  });

  it("abort from an event handler at each step in turn: the run stops before the very next step", async () => {
    const { m, s } = await session();
    const expected = (await s.run(m.inputs)).output!.toArray();
    const order = s.plan.steps.map((st) => st.node);
    for (let k = 0; k < order.length - 1; k++) {
      const ac = new AbortController();
      const seen: SessionEvent[] = [];
      const sub = s.events$.subscribe((e) => {
        seen.push(e);
        if (e.type === "node-end" && e.node === order[k]) ac.abort();
      });
      const err = await s.run(m.inputs, { signal: ac.signal }).catch((e: unknown) => e);
      sub.unsubscribe();
      expect(err, `abort after ${order[k]}`).toBeInstanceOf(AbortError);
      expect(seen.filter((e) => e.type === "node-end").map((e) => (e as { node: string }).node)).toEqual(
        order.slice(0, k + 1),
      );
      expect(seen.at(-1)).toMatchObject({ type: "run-cancelled", node: order[k + 1] });
    }
    expect((await s.run(m.inputs)).output!.toArray()).toEqual(expected);
  });

  it("aborting some of 12 runs in flight: those reject, the others return exactly what they return alone", async () => {
    const { s } = await session();
    const inputs = Array.from({ length: 12 }, (_, i) => caseOf(2 + i, 50 + i).inputs);
    const alone: number[][] = [];
    for (const x of inputs) alone.push((await s.run(x)).output!.toArray());
    const controllers = inputs.map(() => new AbortController());
    const cancelled: number[] = [];
    s.events$.subscribe((e) => e.type === "run-cancelled" && cancelled.push(e.runId));
    const firstId = 13; // 12 runs above
    // Abort runs 2, 5 and 9 (by index) at different points: at once, after a step, after a timer.
    const sub = s.events$.subscribe((e) => {
      if (e.type === "node-end" && e.runId === firstId + 5 && e.node === "keys") controllers[5]!.abort();
    });
    const runs = inputs.map((x, i) => s.run(x, { signal: controllers[i]!.signal }));
    controllers[2]!.abort();
    setTimeout(() => controllers[9]!.abort(), 0);
    const settled = await Promise.allSettled(runs);
    sub.unsubscribe();
    settled.forEach((r, i) => {
      if (i === 2 || i === 5) expect(r.status === "rejected" && r.reason, `run ${i}`).toBeInstanceOf(AbortError);
      else if (i !== 9)
        expect((r as PromiseFulfilledResult<Record<string, Tensor>>).value.output!.toArray(), `run ${i}`).toEqual(
          alone[i],
        );
    });
    // Run 9 may have finished before its timer fired; either way it is an AbortError or its own correct result.
    const r9 = settled[9]!;
    if (r9.status === "rejected") expect(r9.reason).toBeInstanceOf(AbortError);
    else expect(r9.value.output!.toArray()).toEqual(alone[9]);
    expect(cancelled).toEqual(expect.arrayContaining([firstId + 2, firstId + 5]));
    for (const [i, x] of inputs.entries()) expect((await s.run(x)).output!.toArray()).toEqual(alone[i]);
  });
});
