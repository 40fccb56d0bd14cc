import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphBuilder, GraphValidationError, createOpRegistry } from "@attngraph/graph";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { elementwiseUserOp, softcapOp } from "@attngraph/testkit";
import { config as rxConfig, firstValueFrom, take, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { randomTensor, rawAttentionWeights } from "./test-random.js";
import { AbortError, RunError, SessionDisposedError, TapError } from "./errors.js";
import type { SessionEvent, TapEvent } from "./events.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true };
function rawWeights() {
  return rawAttentionWeights({ dIn: 8, dOut: 8, numHeads: 2 });
}
async function session() {
  return compile(buildAttention(config), {
    executors: [createCpuExecutor()],
    weights: attentionWeights(config, rawWeights()),
  });
}

describe("Session.run", () => {
  it("returns the outputs, owned by the caller", async () => {
    const s = await session();
    const x = randomTensor([2, 5, 8], 9);
    const a = await s.run({ x });
    const b = await s.run({ x });
    expect(a.output!.shape).toEqual([2, 5, 8]);
    expect(a.output!.data).not.toBe(b.output!.data);
    expect(a.output!.toArray()).toEqual(b.output!.toArray());
    a.output!.data.fill(0);
    expect((await s.run({ x })).output!.toArray()).toEqual(b.output!.toArray());
  });

  it("rejects bad inputs before running, naming the input, and stays usable", async () => {
    const s = await session();
    await expect(s.run({ x: randomTensor([2, 5, 7], 1) })).rejects.toThrow(/input x: wrong size of dim 2/);
    await expect(s.run({})).rejects.toThrow(/input x: missing input/);
    await expect(s.run({ x: randomTensor([2, 5, 8], 1), y: randomTensor([1], 1) })).rejects.toThrow(
      /input y: unknown input/,
    );
    await expect(s.run({ x: [1, 2, 3] as never })).rejects.toThrow(/input x: not a tensor/);
    expect((await s.run({ x: randomTensor([1, 3, 8], 1) })).output!.shape).toEqual([1, 3, 8]);
  });

  it("runs concurrent runs independently", async () => {
    const s = await session();
    const xs = [1, 2, 3, 4].map((i) => randomTensor([1, i + 2, 8], 10 + i));
    const alone = [];
    for (const x of xs) alone.push((await s.run({ x })).output!.toArray());
    const together = await Promise.all(xs.map((x) => s.run({ x }, { signal: new AbortController().signal })));
    expect(together.map((r) => r.output!.toArray())).toEqual(alone);
  });
});

describe("Session.tap", () => {
  it("delivers each watched node's tensor once per run, tagged with the run id", async () => {
    const s = await session();
    const got: TapEvent[] = [];
    const sub = s.tap(["weights", "scores"]).subscribe((e) => got.push(e));
    await s.run({ x: randomTensor([1, 4, 8], 1) });
    await s.run({ x: randomTensor([1, 4, 8], 2) });
    sub.unsubscribe();
    await s.run({ x: randomTensor([1, 4, 8], 3) });
    expect(got.map((e) => `${e.runId}:${e.node}`)).toEqual(["1:scores", "1:weights", "2:scores", "2:weights"]);
    const w = got[1]!.tensor;
    expect(w.shape).toEqual([1, 2, 4, 4]);
    expect(w.get(0, 0, 0, 1)).toBe(0); // causal: query 0 does not see key 1
    for (let i = 0; i < 4; i++) expect([0, 1, 2, 3].reduce((a, j) => a + w.get(0, 1, i, j), 0)).toBeCloseTo(1, 6);
  });

  it("gives each subscriber its own copy, equal to what an untapped run computes", async () => {
    const s = await session();
    const x = randomTensor([2, 3, 8], 4);
    const untapped = await s.run({ x });
    const a = firstValueFrom(s.tap("output"));
    const b = firstValueFrom(s.tap((n) => n === "output"));
    const tapped = await s.run({ x });
    const [ea, eb] = await Promise.all([a, b]);
    expect(ea.tensor.data).not.toBe(eb.tensor.data);
    expect(ea.tensor.toArray()).toEqual(untapped.output!.toArray());
    expect(tapped.output!.toArray()).toEqual(untapped.output!.toArray());
  });

  it("taps views as their logical values (a transposed view reads like its contiguous copy)", async () => {
    const s = await session();
    const x = randomTensor([1, 3, 8], 5);
    const [split, heads] = await Promise.all([
      firstValueFrom(s.tap("q.split")),
      firstValueFrom(s.tap("q.heads")),
      s.run({ x }),
    ]);
    expect(heads.tensor.shape).toEqual([1, 2, 3, 4]);
    expect(heads.tensor.get(0, 1, 2, 3)).toBe(split.tensor.get(0, 2, 1, 3));
  });

  it("refuses a tap of a node that does not exist, listing the ones that do", async () => {
    const s = await session();
    expect(() => s.tap("wieghts")).toThrow(GraphValidationError);
    expect(() => s.tap(["weights", "nope"])).toThrow(/tap nope: no node of this name, expected one of queries, keys/);
  });

  it("a subscriber that throws does not fail the run or starve others; rxjs reports the throw", async () => {
    const s = await session();
    const seen: string[] = [];
    const reported: unknown[] = [];
    rxConfig.onUnhandledError = (e) => reported.push(e);
    try {
      s.tap("weights").subscribe(() => {
        throw new Error("subscriber bug");
      });
      s.tap("weights").subscribe((e) => seen.push(e.node));
      const out = await s.run({ x: randomTensor([1, 2, 8], 1) });
      await new Promise((r) => setTimeout(r, 5));
      expect(out.output!.shape).toEqual([1, 2, 8]);
      expect(seen).toEqual(["weights"]);
      expect(reported.map((e) => (e as Error).message)).toEqual(["subscriber bug"]);
    } finally {
      rxConfig.onUnhandledError = null;
    }
  });
});

describe("Session.events$", () => {
  it("emits run start/end and node start/end with executor and timing, in order", async () => {
    const s = await session();
    const all = firstValueFrom(s.events$.pipe(take(2 + 2 * s.plan.steps.length), toArray()));
    await s.run({ x: randomTensor([1, 3, 8], 1) });
    const events = await all;
    expect(events[0]!.type).toBe("run-start");
    expect(events.at(-1)).toMatchObject({ type: "run-end", runId: 1 });
    const ends = events.filter((e): e is Extract<SessionEvent, { type: "node-end" }> => e.type === "node-end");
    expect(ends.map((e) => e.node)).toEqual(s.plan.steps.map((st) => st.node));
    expect(ends.every((e) => e.executor === "cpu" && e.ms >= 0)).toBe(true);
    expect(ends.find((e) => e.node === "context.heads")!.shape).toEqual([1, 2, 3, 4]);
  });

  it("a failing kernel rejects with a RunError naming the node, emits run-error, and the next run works", async () => {
    const registry = createOpRegistry([elementwiseUserOp("boom", "fails on negative sums")]);
    const b = new GraphBuilder({ registry });
    const x = b.input("x", ["N"]);
    const graph = b.output(b.add("boom", "explode", { x })).build();
    const cpu = createCpuExecutor();
    cpu.registerKernel("boom", ({ inputs }: { inputs: readonly (Tensor | undefined)[] }) => {
      if (inputs[0]!.toArray().reduce((a, v) => a + v, 0) < 0) throw new Error("negative sum");
      return inputs[0]!;
    });
    const s = await compile(graph, { executors: [cpu] });
    const events: SessionEvent[] = [];
    s.events$.subscribe((e) => events.push(e));
    const err = await s.run({ x: Tensor.from([-1, -2], [2]) }).catch((e) => e);
    expect(err).toBeInstanceOf(RunError);
    expect(err.message).toMatch(/node explode \(op boom on cpu\) failed: negative sum/);
    expect(AttnGraphError.isInstance(err) && err.subject).toBe("explode");
    expect(events.at(-1)).toMatchObject({ type: "run-error", node: "explode" });
    expect((await s.run({ x: Tensor.from([1, 2], [2]) })).explode!.toArray()).toEqual([1, 2]);
  });
});

describe("cancellation", () => {
  it("an already aborted signal rejects at once with an AbortError and a run-cancelled event", async () => {
    const s = await session();
    const events: SessionEvent[] = [];
    s.events$.subscribe((e) => events.push(e));
    const ac = new AbortController();
    ac.abort();
    await expect(s.run({ x: randomTensor([1, 3, 8], 1) }, { signal: ac.signal })).rejects.toBeInstanceOf(AbortError);
    expect(events.map((e) => e.type)).toEqual(["run-start", "run-cancelled"]);
  });

  it("aborting mid-run stops between steps; the next run is correct", async () => {
    const s = await session();
    const x = randomTensor([1, 4, 8], 2);
    const expected = (await s.run({ x })).output!.toArray();
    const ac = new AbortController();
    const sub = s.events$.subscribe((e) => e.type === "node-end" && e.node === "queries" && ac.abort());
    const err = await s.run({ x }, { signal: ac.signal }).catch((e) => e);
    sub.unsubscribe();
    expect(err).toBeInstanceOf(AbortError);
    expect(err.name).toBe("AbortError");
    expect(err.message).toMatch(/aborted before node keys/);
    expect((await s.run({ x })).output!.toArray()).toEqual(expected);
  });
});

describe("dispose", () => {
  it("completes events$ and every tap, and refuses further runs", async () => {
    const s = await session();
    const done: string[] = [];
    s.events$.subscribe({ complete: () => done.push("events") });
    s.tap("weights").subscribe({ complete: () => done.push("tap") });
    await s.dispose();
    expect(done.sort()).toEqual(["events", "tap"]);
    await expect(s.run({ x: randomTensor([1, 2, 8], 1) })).rejects.toThrow(/session is disposed/);
  });
});

describe("compile", () => {
  it("checks weights against the graph: missing, unknown, wrong shape", async () => {
    const graph = buildAttention(config);
    const w = attentionWeights(config, rawWeights());
    const executors = [createCpuExecutor()];
    const { W_key: _, ...missing } = w;
    await expect(compile(graph, { executors, weights: missing })).rejects.toThrow(
      /weight W_key: missing weight, expected a tensor of shape \[8, 8\]/,
    );
    await expect(compile(graph, { executors, weights: { ...w, extra: Tensor.zeros([1]) } })).rejects.toThrow(
      /weight extra: the graph declares no such weight/,
    );
    await expect(compile(graph, { executors, weights: { ...w, W_key: Tensor.zeros([8, 7]) } })).rejects.toThrow(
      /weight W_key: wrong shape, expected \[8, 8\], got \[8, 7\]/,
    );
  });

  it("a node no executor supports fails at compile time, not mid-run", async () => {
    const registry = createOpRegistry([softcapOp(30)]);
    const b = new GraphBuilder({ registry });
    const graph = b.output(b.add("softcap", "capped", { x: b.input("x", [2]) })).build();
    await expect(compile(graph, { executors: [createCpuExecutor()] })).rejects.toThrow(
      /^unsupported: op softcap on executor cpu/,
    );
  });
});

describe("releasing executor memory", () => {
  it("gives back every value of a run (uploads and step results) at its end, and weights at dispose", async () => {
    const cpu = createCpuExecutor();
    const released: Tensor[] = [];
    const executor = {
      specVersion: 1 as const,
      name: "tracked",
      supports: (k: string, a: Readonly<Record<string, unknown>>) => cpu.supports(k, a),
      registerKernel: () => {},
      upload: (t: Tensor) => cpu.upload(t),
      download: (t: Tensor) => cpu.download(t),
      dispatch: (c: Parameters<typeof cpu.dispatch>[0]) => cpu.dispatch(c),
      release: (t: Tensor) => void released.push(t),
    };
    const s = await compile(buildAttention(config), {
      executors: [executor],
      weights: attentionWeights(config, rawWeights()),
    });
    const x = randomTensor([1, 3, 8], 1);
    await s.run({ x });
    expect(released).toContain(x); // the upload of x
    expect(released.length).toBe(1 + s.plan.steps.length);
    released.length = 0;
    await expect(s.run({ x: randomTensor([1, 3, 7], 1) })).rejects.toThrow();
    expect(released.length).toBe(0); // rejected before anything was uploaded
    await s.dispose();
    expect(released.length).toBe(5); // W_query, W_key, W_value, out_proj, out_bias
  });
});

describe("misuse is a typed error and the session stays usable", () => {
  it("a tap predicate that throws: that run rejects with a TapError naming the tap, the tap is dropped, later runs work", async () => {
    const s = await session();
    const x = randomTensor([1, 3, 8], 1);
    let completed = false;
    s.tap(() => {
      throw new Error("boom");
    }).subscribe({ complete: () => (completed = true) });
    const good: string[] = [];
    s.tap("weights").subscribe((e) => good.push(e.node));
    const err = await s.run({ x }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapError);
    expect(AttnGraphError.isInstance(err) && err.code).toBe("tap");
    expect((err as Error).message).toMatch(
      /^tap #1 \(predicate\): the node predicate threw on node [\w.]+: boom; the tap was dropped$/,
    );
    expect(completed).toBe(true);
    const out = await s.run({ x });
    expect(out.output!.shape).toEqual([1, 3, 8]);
    expect(good).toEqual(["weights"]); // the healthy tap saw the second run (the first one rejected before any step)
  });

  it("tap() after dispose() is a typed error; a tap subscribed after dispose() completes at once", async () => {
    const s = await session();
    const early = s.tap("weights");
    await s.dispose();
    expect(() => s.tap("weights")).toThrow(SessionDisposedError);
    expect(() => s.tap("weights")).toThrow(/^tap\(\): the session is disposed/);
    await expect(firstValueFrom(early, { defaultValue: "completed" })).resolves.toBe("completed");
    await expect(s.run({ x: randomTensor([1, 2, 8], 1) })).rejects.toThrow(SessionDisposedError);
  });

  it("inputs that are not Tensors (duck-typed, null, arrays) are typed errors naming the input", async () => {
    const s = await session();
    const fake = { shape: [1, 3, 8], data: new Float32Array(24), strides: [24, 8, 1], offset: 0 };
    await expect(s.run({ x: fake as never })).rejects.toThrow(
      /^input x: not a tensor, expected a Tensor \(@attngraph\/tensor\), got an object with a shape that is not a Tensor$/,
    );
    await expect(s.run(null as never)).rejects.toThrow(
      /^run inputs: invalid inputs, expected an object of tensors by name, got null$/,
    );
    await expect(s.run([] as never)).rejects.toThrow(/run inputs: invalid inputs/);
    await expect(s.run({ x: null as never })).rejects.toThrow(/^input x: not a tensor.*got null$/);
    // null options are the defaults, not an error: the run gives its output.
    expect((await s.run({ x: randomTensor([1, 3, 8], 1) }, null as never)).output!.shape).toEqual([1, 3, 8]);
    expect((await s.run({ x: randomTensor([1, 3, 8], 1) })).output!.shape).toEqual([1, 3, 8]);
  });

  it("compile(): missing options or executors, a non-executor, and plain-object weights are typed errors", async () => {
    const graph = buildAttention(config);
    const weights = attentionWeights(config, rawWeights());
    await expect(compile(graph, {} as never)).rejects.toThrow(
      /^executors: no executor list, expected an array of executors/,
    );
    await expect(compile(graph, undefined as never)).rejects.toThrow(/^compile options: missing options/);
    await expect(compile(graph, { executors: [{}] as never })).rejects.toThrow(/^executors\[0\]: not an executor/);
    const plain = { ...weights, W_key: { shape: [8, 8], data: new Float32Array(64) } };
    await expect(compile(graph, { executors: [createCpuExecutor()], weights: plain as never })).rejects.toThrow(
      /^weight W_key: not a tensor, expected a Tensor of shape \[8, 8\], got an object with a shape that is not a Tensor$/,
    );
  });

  it("names are own keys: an input, weight, output or placement named like an Object.prototype member is just a name", async () => {
    const b = new GraphBuilder();
    const x = b.input("constructor", [2]);
    const out = b.output(
      b.add("transpose", "__proto__", { x: b.add("reshape", "valueOf", { x }, { shape: [2, 1] }) }, { perm: [1, 0] }),
    );
    const graph = out.build();
    const s = await compile(graph, { executors: [createCpuExecutor()], placement: { valueOf: "cpu" } });
    const result = await s.run({ constructor: Tensor.from([1, 2], [2]) });
    expect(Object.keys(result)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    const t = Object.getOwnPropertyDescriptor(result, "__proto__")!.value as Tensor;
    expect(t.shape).toEqual([1, 2]);
    expect(t.toArray()).toEqual([1, 2]);
    // Not passing the input named "constructor" is a missing input, not Object's constructor taken for a tensor.
    await expect(s.run({})).rejects.toThrow(/^input constructor: missing input/);
  });
});

describe("weights: copied at compile, changed only by setWeights()", () => {
  it("changing the caller's tensors after compile changes nothing; setWeights() changes the next run", async () => {
    const raw = rawWeights();
    const weights = attentionWeights(config, raw);
    const s = await compile(buildAttention(config), { executors: [createCpuExecutor()], weights });
    const x = randomTensor([1, 4, 8], 3);
    const before = (await s.run({ x })).output!.toArray();
    weights.out_bias!.data.fill(100);
    expect((await s.run({ x })).output!.toArray()).toEqual(before);
    s.setWeights({ out_bias: Tensor.zeros([8]) });
    const after = (await s.run({ x })).output!;
    const fresh = await compile(buildAttention(config), {
      executors: [createCpuExecutor()],
      weights: { ...attentionWeights(config, raw), out_bias: Tensor.zeros([8]) },
    });
    expect(after.toArray()).toEqual((await fresh.run({ x })).output!.toArray());
    expect(s.getWeights().get("out_bias")!.toArray()).toEqual(new Array(8).fill(0));
  });

  it("setWeights() checks names, brands and shapes like compile() and leaves the session unchanged on error", async () => {
    const s = await session();
    const x = randomTensor([1, 4, 8], 3);
    const before = (await s.run({ x })).output!.toArray();
    expect(() => s.setWeights({ nope: Tensor.zeros([1]) })).toThrow(/^weight nope: the graph declares no such weight/);
    expect(() => s.setWeights({ out_bias: Tensor.zeros([7]) })).toThrow(
      /^weight out_bias: wrong shape, expected \[8\], got \[7\]/,
    );
    expect(() => s.setWeights({ out_bias: { shape: [8] } as never })).toThrow(/^weight out_bias: not a tensor/);
    expect((await s.run({ x })).output!.toArray()).toEqual(before);
  });
});

describe("dispose() while runs are in flight", () => {
  it("the runs reject with SessionDisposedError and every value, weight upload and arena they held is released", async () => {
    const cpu = createCpuExecutor();
    const live = new Set<unknown>();
    let arenas = 0;
    const executor = {
      specVersion: 1 as const,
      name: "tracked",
      supports: (k: string, a: Readonly<Record<string, unknown>>) => cpu.supports(k, a),
      registerKernel: () => {},
      upload: (t: Tensor) => {
        const v = cpu.upload(t).clone(); // a distinct object per upload, so each can be tracked
        live.add(v);
        return v;
      },
      download: (t: Tensor) => cpu.download(t),
      // Async like wasm/webgpu dispatch behind a queue, so dispose() lands between steps.
      dispatch: async (c: Parameters<typeof cpu.dispatch>[0]) => {
        await new Promise((r) => setTimeout(r, 1));
        const v = await cpu.dispatch(c);
        if (!c.out) live.add(v);
        return v;
      },
      createArena: (n: number) => {
        const a = cpu.createArena(n);
        arenas++;
        return Object.assign(Object.create(null) as object, {
          view: a.view.bind(a),
          holds: a.holds.bind(a),
          copy: a.copy.bind(a),
          dispose: () => void arenas--,
        });
      },
      release: (v: unknown) => void live.delete(v),
    };
    const s = await compile(buildAttention(config), {
      executors: [executor],
      weights: attentionWeights(config, rawWeights()),
    });
    const runs = [3, 4, 5, 6].map((t) => s.run({ x: randomTensor([1, t, 8], t) }).catch((e: unknown) => e));
    await new Promise((r) => setTimeout(r, 3));
    await s.dispose();
    const results = await Promise.all(runs);
    for (const r of results) expect(r).toBeInstanceOf(SessionDisposedError);
    expect((results[0] as Error).message).toMatch(/^run \d+: the session is disposed \(stopped before node [\w.]+\)$/);
    await new Promise((r) => setTimeout(r, 0));
    expect(live.size).toBe(0);
    expect(arenas).toBe(0);
  });
});
