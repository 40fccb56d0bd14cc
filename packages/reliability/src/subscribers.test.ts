// Tap subscribers that throw, are slow, re-enter the session or keep what they get: none breaks or delays a run's
// steps. Delivery policy (packages/runtime/README.md): watched tensors are copied onto per-subscriber queues during
// the run, and delivered after its last step ("settle", the default) or in tasks of their own ("detached").
import { normalizeConfig } from "@attngraph/attention";
import { compile, type SessionEvent, type TapEvent } from "@attngraph/runtime";
import { config as rxConfig, firstValueFrom } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { materialize } from "./cases.js";
import { executors } from "./executors.js";

const config = normalizeConfig({ dIn: 8, dOut: 8, numHeads: 2, causal: true });
const m = materialize({ config, fusedQkv: false, B: 1, T: 6, S: 6, padding: false, magnitude: 1, seed: 9 });
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

afterEach(() => {
  rxConfig.onUnhandledError = null;
});

describe.each(executors.map((e) => [e.name, e] as const))("%s: tap subscribers", (_name, entry) => {
  const session = async (taps?: { delivery: "settle" | "detached"; buffer?: number }) =>
    compile(m.graph, { executors: [await entry.create()], weights: m.weights, ...(taps ? { taps } : {}) });

  it("a subscriber that throws on every event: runs succeed, the others get everything, each throw is reported", async () => {
    const s = await session();
    const reported: unknown[] = [];
    rxConfig.onUnhandledError = (e) => reported.push(e);
    const baseline = s.tap(["scores", "weights"]).subscribe(); // the same (unfused) plan as the runs below
    const expected = (await s.run(m.inputs)).output!.toArray();
    baseline.unsubscribe();
    s.tap(["scores", "weights"]).subscribe(() => {
      throw new Error("subscriber bug");
    });
    const seen: string[] = [];
    s.tap(["scores", "weights"]).subscribe((e) => seen.push(`${e.runId}:${e.node}`));
    for (let i = 0; i < 3; i++) expect((await s.run(m.inputs)).output!.toArray()).toEqual(expected);
    expect(seen).toEqual(["2:scores", "2:weights", "3:scores", "3:weights", "4:scores", "4:weights"]);
    await new Promise((r) => setTimeout(r, 5)); // rxjs reports a subscriber's throw from a timer of its own
    expect(reported.map((e) => (e as Error).message)).toEqual(Array(6).fill("subscriber bug"));
  });

  it("a slow subscriber (25 ms per event) never runs between the run's steps; `await run()` still means delivered", async () => {
    const s = await session();
    await s.run(m.inputs); // warm-up: webgpu compiles its pipelines on the first run, which is no subscriber's time
    const log: { what: string; at: number }[] = [];
    s.events$.subscribe((e) => e.type === "node-end" && log.push({ what: `step ${e.node}`, at: performance.now() }));
    s.tap(["queries", "scores", "weights"]).subscribe((e) => {
      log.push({ what: `tap ${e.node}`, at: performance.now() });
      busy(25);
    });
    const events: SessionEvent[] = [];
    s.events$.subscribe((e) => events.push(e));
    await s.run(m.inputs);
    const lastStep = log.map((l) => l.what.startsWith("step")).lastIndexOf(true);
    const firstTap = log.findIndex((l) => l.what.startsWith("tap"));
    expect(log.filter((l) => l.what.startsWith("tap")).length).toBe(3); // delivered before run() settled
    expect(firstTap).toBeGreaterThan(lastStep); // no subscriber time inside the run's steps
    const stepMs = events
      .filter((e): e is Extract<SessionEvent, { type: "node-end" }> => e.type === "node-end")
      .reduce((a, e) => a + e.ms, 0);
    // The 75 ms of subscriber work appears in no step's time. The bound is that work, not a speed claim: steps that
    // included it would sum to 75 ms or more however fast the machine (the order check above is the exact one).
    expect(stepMs).toBeLessThan(75);
  });

  it("detached delivery: a slow subscriber does not hold back run(); it falls behind, loses its oldest events and says so", async () => {
    const s = await session({ delivery: "detached", buffer: 4 });
    const got: TapEvent[] = [];
    s.tap("weights").subscribe((e) => {
      got.push(e);
      busy(10);
    });
    const dropped: Extract<SessionEvent, { type: "tap-dropped" }>[] = [];
    s.events$.subscribe((e) => e.type === "tap-dropped" && dropped.push(e));
    const runs = await Promise.all(Array.from({ length: 20 }, () => s.run(m.inputs)));
    expect(runs.length).toBe(20);
    // With a synchronous executor every run settles before a detached delivery task gets a turn; an asynchronous one
    // (webgpu awaits the device between steps) lets deliveries in between, but never inside a step.
    if (_name !== "webgpu") expect(got.length).toBe(0);
    for (let waited = 0; got.length < 4 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    if (_name !== "webgpu") {
      // Bounded: 4 pending at most, so 16 of 20 dropped (oldest first), each counted; the 4 newest arrive.
      expect(got.map((e) => e.runId)).toEqual([17, 18, 19, 20]);
      expect(dropped.map((d) => d.runId)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
      expect(dropped.at(-1)!.dropped).toBe(16);
    } else {
      // Deliveries interleave with the other runs' device waits: whatever arrived plus whatever was dropped is every
      // run exactly once, the newest four always arrive, and never more than 4 were pending.
      expect([...got.map((e) => e.runId), ...dropped.map((d) => d.runId)].sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      expect(got.map((e) => e.runId).slice(-4)).toEqual([17, 18, 19, 20]);
    }
  });

  it("tapped tensors are copies the subscriber owns; firstValueFrom(tap) + await run() works; re-entrant runs work", async () => {
    const s = await session();
    const expected = await s.run(m.inputs);
    const [a, b] = [firstValueFrom(s.tap("weights")), firstValueFrom(s.tap("weights"))];
    await s.run(m.inputs);
    const [ea, eb] = await Promise.all([a, b]);
    expect(ea.tensor.data).not.toBe(eb.tensor.data);
    ea.tensor.data.fill(NaN); // scribbling on one copy touches neither the other nor later runs
    expect(eb.tensor.toArray().some(Number.isNaN)).toBe(false);
    // A subscriber that starts another run from inside `next` (a UI reacting to a result) neither deadlocks nor mixes.
    const nested: Promise<Record<string, unknown>>[] = [];
    const sub = s.tap("output").subscribe((e) => e.runId === 3 && nested.push(s.run(m.inputs)));
    expect((await s.run(m.inputs)).output!.toArray()).toEqual(expected.output!.toArray());
    expect(nested.length).toBe(1);
    expect(((await nested[0]!) as { output: { toArray(): number[] } }).output.toArray()).toEqual(
      expected.output!.toArray(),
    );
    sub.unsubscribe();
  });
});
