// Session lifecycle on every executor: weights follow one rule (copied at compile, changed only by setWeights()),
// many shapes in flight and dispose() during runs leave nothing behind on the executor. The long versions of the two
// soaks run in `pnpm soak` (docs/reliability.md).
import { normalizeConfig } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { materialize } from "./cases.js";
import { executors } from "./executors.js";
import { disposeMidRunSoak, formatDisposeSoakTable, formatShapeSoakTable, shapeSoak } from "./shape-soak.js";

const config = normalizeConfig({ dIn: 16, dOut: 16, numHeads: 2, causal: true, qkvBias: true });
const c = materialize({ config, fusedQkv: false, B: 2, T: 5, S: 5, padding: false, magnitude: 1, seed: 7 });

describe.each(executors.map((e) => [e.name, e] as const))("%s: session lifecycle", (_name, entry) => {
  it("weights are copied at compile: changing the caller's tensors afterwards changes no executor's result", async () => {
    const weights = Object.fromEntries(Object.entries(c.weights).map(([k, t]) => [k, t.clone()]));
    const session = await compile(c.graph, { executors: [await entry.create()], weights });
    const before = (await session.run(c.inputs)).output!.toArray();
    for (const t of Object.values(weights)) t.data.fill(0.5);
    expect((await session.run(c.inputs)).output!.toArray()).toEqual(before);
    await session.dispose();
  });

  it("setWeights() reaches the executor from the next run on, equal to a fresh session with those weights", async () => {
    const session = await compile(c.graph, { executors: [await entry.create()], weights: c.weights });
    const before = (await session.run(c.inputs)).output!.toArray();
    const changed = {
      W_value: Tensor.from(
        c.weights["W_value"]!.toArray().map((v) => -v),
        c.weights["W_value"]!.shape,
      ),
    };
    session.setWeights(changed);
    const after = (await session.run(c.inputs)).output!.toArray();
    expect(after).not.toEqual(before);
    const fresh = await compile(c.graph, { executors: [await entry.create()], weights: { ...c.weights, ...changed } });
    expect(after).toEqual((await fresh.run(c.inputs)).output!.toArray());
    await Promise.all([session.dispose(), fresh.dispose()]);
  });

  if (!entry.live) return;

  it("40 distinct shapes × 40 runs in flight (more than the 32 cached bindings): live memory is flat and freed on dispose", async () => {
    const r = await shapeSoak(entry, { shapes: 40, inFlight: 40, rounds: 4 });
    console.log(formatShapeSoakTable([r]));
    expect(r.final, `${r.unit} after the last round vs the first`).toBe(r.warm);
    expect(r.disposed, `${r.unit} after dispose() vs before the session`).toBe(r.before);
    if (r.reserved) expect(r.reserved.final, "wasm Memory bytes").toBe(r.reserved.warm);
  }, 120_000);

  it("dispose() while runs are in flight, 20 times: the runs finish or reject with SessionDisposedError, nothing stays", async () => {
    const r = await disposeMidRunSoak(entry, { times: 20, inFlight: 6 });
    console.log(formatDisposeSoakTable([r]));
    expect(r.otherErrors).toEqual([]);
    expect(r.rejected, "some runs were really cut off by dispose()").toBeGreaterThan(0);
    expect(r.after, r.unit).toBe(r.before);
  }, 120_000);
});
