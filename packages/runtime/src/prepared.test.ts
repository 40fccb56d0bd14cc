import type { Arena, Executor } from "@attngraph/graph";
import { lower } from "@attngraph/scheduler";
import { buildAttention } from "@attngraph/attention";
import { describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { acquireArenas, PreparedCache, returnArenas } from "./prepared.js";

/** The cpu executor with its arenas counted: made, and disposed. */
function countingCpu(): { executor: Executor; live: () => number } {
  const cpu = createCpuExecutor();
  const make = cpu.createArena.bind(cpu);
  let live = 0;
  const createArena = (elements: number): Arena<unknown> => {
    const arena = make(elements);
    live++;
    return {
      view: (o, s) => arena.view(o, s),
      holds: (v) => arena.holds(v as never),
      copy: (a, b) => arena.copy(a as never, b as never),
      dispose: () => void live--,
    };
  };
  (cpu as Executor).createArena = createArena;
  return { executor: cpu, live: () => live };
}

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true };
const weightShapes = { W_query: [8, 8], W_key: [8, 8], W_value: [8, 8], out_proj: [8, 8], out_bias: [8] };

describe("PreparedCache", () => {
  it("finds the binding of the run before by value, and a new one when a shape, a dim or the plan changes", () => {
    const { executor } = countingCpu();
    const plan = lower(buildAttention(config), { executors: [executor] });
    const other = lower(buildAttention(config), { executors: [executor] });
    const cache = new PreparedCache();
    const shape = [1, 4, 8];
    const a = cache.get(plan, { x: shape }, weightShapes);
    expect(cache.get(plan, { x: [1, 4, 8] }, weightShapes)).toBe(a); // equal shapes, another array
    shape[1] = 5; // the caller's array changing afterwards changes nothing the cache remembered
    expect(cache.get(plan, { x: [1, 4, 8] }, weightShapes)).toBe(a);
    const b = cache.get(plan, { x: [1, 5, 8] }, weightShapes);
    expect(b).not.toBe(a);
    expect(b.shapes.get("x")).toEqual([1, 5, 8]);
    expect(cache.get(plan, { x: [1, 4, 8] }, weightShapes)).toBe(a); // back to the first: still cached
    expect(cache.get(plan, { x: [1, 4, 8] }, weightShapes, { P: 3 })).not.toBe(a); // a dim is part of the binding
    expect(cache.get(other, { x: [1, 4, 8] }, weightShapes)).not.toBe(a);
  });

  it("an evicted binding frees the arenas that runs in flight give back, instead of pooling them forever", () => {
    const { executor, live } = countingCpu();
    const plan = lower(buildAttention(config), { executors: [executor] });
    const cache = new PreparedCache();
    // 40 distinct shapes in flight at once: more than the cache's 32 bindings.
    const inFlight = Array.from({ length: 40 }, (_, i) => {
      const p = cache.get(plan, { x: [1, i + 1, 8] }, weightShapes);
      return { p, set: acquireArenas(p, plan.executors) };
    });
    expect(live()).toBe(40);
    for (const { p, set } of inFlight) returnArenas(p, set);
    expect(live()).toBe(32); // the 8 evicted bindings' arenas are gone; the 32 cached ones are pooled
    cache.dispose();
    expect(live()).toBe(0);
  });

  it("dispose() with runs in flight: their arenas are freed when they come back", () => {
    const { executor, live } = countingCpu();
    const plan = lower(buildAttention(config), { executors: [executor] });
    const cache = new PreparedCache();
    const p = cache.get(plan, { x: [1, 4, 8] }, weightShapes);
    const a = acquireArenas(p, plan.executors);
    const b = acquireArenas(p, plan.executors);
    returnArenas(p, a);
    cache.dispose();
    expect(live()).toBe(1);
    returnArenas(p, b);
    expect(live()).toBe(0);
  });
});
