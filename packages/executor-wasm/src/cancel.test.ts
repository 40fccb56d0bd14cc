// Cancelling a run in the middle of a long step (issue 11 item 9), the way users run it: compile → run with a signal
// → abort() 50 ms later. The runtime passes the run's signal to each dispatch; the fused attention works in chunks and
// checks it between them, so the run rejects with the runtime's AbortError soon after abort(), not when the step would
// have ended, and the session goes on working. Both executors that compute on the main thread are here: the CPU
// executor's package cannot depend on the runtime (the runtime's own tests depend on it).
import { describe, expect, it } from "vitest";
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { Executor } from "@attngraph/graph";
import { AbortError, compile, type SessionEvent } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { random, wasmExecutor } from "./test-util.js";

const config = { dIn: 8, dOut: 8, numHeads: 1, causal: true };
const m = (seed: number) => ({ shape: [8, 8], data: random([8, 8], seed).toFloat32Array() });
const weights = () =>
  attentionWeights(config, {
    W_query: m(1),
    W_key: m(2),
    W_value: m(3),
    out_proj: m(4),
    out_bias: { shape: [8], data: random([8], 5).toFloat32Array() },
  });

/** The exact bits of a tensor's elements, row-major. */
const bits = (t: Tensor): Uint32Array => new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer);

// T for a fused causal attention step of several seconds on one core of a shared 2-core VM (D = 8): the CPU executor
// does about 4·10⁷ query-key pairs per second there, the wasm one about 2·10⁸.
const executors: readonly { readonly name: string; readonly create: () => Promise<Executor>; readonly T: number }[] = [
  { name: "cpu", create: async () => createCpuExecutor(), T: 16384 },
  { name: "wasm", create: () => wasmExecutor(), T: 49152 },
];

describe.each(executors)("abort() in the middle of a long step on $name", ({ create, T }) => {
  it("rejects with AbortError within well under a second, naming the step; the session goes on working", async () => {
    const session = await compile(multiHeadAttention(config), { executors: [await create()], weights: weights() });
    const small = random([1, 20, 8], 6);
    const want = (await session.run({ x: small })).output!;

    // What a whole run would take, from a run a quarter as long (1/16 of the attention's work, which is ∝ T²).
    const t0 = performance.now();
    await session.run({ x: random([1, T / 4, 8], 7) });
    const estimate = 16 * (performance.now() - t0);

    const events: SessionEvent[] = [];
    const controller = new AbortController();
    const reason = new Error("user cancelled");
    let abortedAt = 0;
    // abort() 50 ms after the long step has started (not 50 ms after run(): on a loaded machine the steps before it
    // may take that long, and the run would then stop before the step this test is about).
    const sub = session.events$.subscribe((e) => {
      events.push(e);
      if (e.type === "node-start" && e.kind === "attention") {
        setTimeout(() => {
          abortedAt = performance.now();
          controller.abort(reason);
        }, 50);
      }
    });
    const x = random([1, T, 8], 8);
    const start = performance.now();
    const error = await session.run({ x }, { signal: controller.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const end = performance.now();
    sub.unsubscribe();

    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).name).toBe("AbortError");
    expect((error as AbortError).cause).toBe(reason);
    expect(end - abortedAt, "from abort() to the rejection, in ms").toBeLessThan(1000);
    expect(estimate, "a whole run would have taken far longer than the aborted one").toBeGreaterThan(5 * (end - start));
    // It stopped inside the fused attention step: started, never ended, and named by run-cancelled.
    const started = events
      .filter((e) => e.type === "node-start" && e.kind === "attention")
      .map((e) => (e as { node: string }).node);
    expect(started).toHaveLength(1);
    expect(events.some((e) => e.type === "node-end" && e.kind === "attention")).toBe(false);
    expect(events.find((e) => e.type === "run-cancelled")).toMatchObject({ node: started[0] });
    expect((error as AbortError).message).toBe(
      `run ${(events[0] as { runId: number }).runId}: aborted during node ${started[0]}`,
    );

    const again = (await session.run({ x: small })).output!;
    expect(bits(again)).toEqual(bits(want));
    await session.dispose();
  });
});
