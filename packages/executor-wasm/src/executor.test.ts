// dispose() wins over init(), whenever it comes: right after init() is called, after a microtask, once the module is
// compiled, at every microtask after that (the worker spawn), once the workers exist, while they instantiate the
// module, after init() resolved. Each time no worker is left (counted by their "exit" events: liveWorkers), a pending
// init() rejects with the executor's disposed error, and every later use (upload, dispatch, init) fails with it.
// Threads: 3 (two workers) where the pool is involved; the one-thread executor has the same init() and is checked too.
// No timing assertions: every wait is for an event (a worker's exit, a promise), with a generous timeout.
import { Worker } from "node:worker_threads";
import { setImmediate as macrotask } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { ChunkedWasmKernel, WasmExecutor } from "./executor.js";
import { createWasmExecutor } from "./index.js";
import { liveWorkers } from "./threads/pool.js";
import { thrown } from "./test-util.js";

/** Waiting for workers to exit: seconds on a loaded 2-core machine at worst. */
const EXITED = { timeout: 60_000, interval: 10 };
// Every test here starts and stops workers, some of them dozens of times.
vi.setConfig({ testTimeout: 120_000 });

/** A promise's outcome as a value: "resolved", or what it rejected with. */
const outcome = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => "resolved",
    (e: unknown) => e,
  );

function expectDisposedError(e: unknown): void {
  expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
  expect(e).toMatchObject({ code: "not-initialised", subject: "executor wasm", message: "executor wasm: disposed" });
}

/** What a disposed executor must show: no worker left, and every use failing with the disposed error. */
async function expectGone(ex: WasmExecutor): Promise<void> {
  await vi.waitFor(() => expect(liveWorkers()).toBe(0), EXITED);
  expectDisposedError(thrown(() => ex.upload(Tensor.from([1, 2], [2]))));
  expectDisposedError(thrown(() => ex.dispatch({ kind: "add", node: "add", attrs: {}, inputs: [], outShape: [2] })));
  expectDisposedError(thrown(() => ex.memory));
  expectDisposedError(await outcome(ex.init()));
  const { requested } = ex.threading;
  expect(ex.threading).toEqual(
    requested > 1 ? { requested, threads: 1, reason: "the executor is disposed" } : { requested, threads: 1 },
  );
}

const made: WasmExecutor[] = [];
function executor(threads: number): WasmExecutor {
  const ex = createWasmExecutor({ flavour: "simd", threads });
  made.push(ex);
  return ex;
}

beforeEach(() => {
  // Every test starts with no worker: each one waits for its own to exit.
  expect(liveWorkers()).toBe(0);
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const ex of made.splice(0)) ex.dispose();
});

/** Calls `then` right after the next WebAssembly.compile resolves, before its caller (loadKernelModule) resumes. */
function afterCompile(then: () => void): void {
  const compile = WebAssembly.compile.bind(WebAssembly);
  vi.spyOn(WebAssembly, "compile").mockImplementationOnce(async (bytes) => {
    const module = await compile(bytes);
    then();
    return module;
  });
}

/**
 * Calls `then` at the pool's first postMessage to a worker, when every worker is spawned: `when` "before" that message
 * goes (no worker has the module yet), "after" it (the first worker is instantiating it).
 */
function atFirstPost(then: () => void, when: "before" | "after"): void {
  const post = Worker.prototype.postMessage;
  vi.spyOn(Worker.prototype, "postMessage").mockImplementationOnce(function (
    this: Worker,
    ...args: Parameters<Worker["postMessage"]>
  ) {
    if (when === "before") then();
    post.apply(this, args);
    if (when === "after") then();
  });
}

async function microtasks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await macrotask();
}

/** Where dispose() lands while init() is pending, and what that point leaves to check besides the disposed error. */
interface DisposePoint {
  readonly when: string;
  /** Calls init() on `ex` with dispose() arranged at the point: init()'s outcome, and what the point counted if any. */
  readonly run: (ex: WasmExecutor) => Promise<readonly [outcome: unknown, counted?: number]>;
  /** No module instance may exist (dispose() came before one). */
  readonly noInstance?: boolean;
  /** What `run` counted (workers spawned, messages posted) must be this. */
  readonly counted?: number;
}

/** init() called, then dispose() at once. */
async function rightAfterInit(ex: WasmExecutor): Promise<readonly [unknown]> {
  const init = outcome(ex.init());
  ex.dispose();
  return [await init];
}

/** init() called, then dispose() after a microtask. */
async function afterAMicrotask(ex: WasmExecutor): Promise<readonly [unknown]> {
  const init = outcome(ex.init());
  await Promise.resolve();
  ex.dispose();
  return [await init];
}

/** dispose() before init() is called. */
async function beforeInit(ex: WasmExecutor): Promise<readonly [unknown]> {
  ex.dispose();
  return [await outcome(ex.init())];
}

/** dispose() once the module is compiled, before it is instantiated. */
async function onceCompiled(ex: WasmExecutor): Promise<readonly [unknown]> {
  afterCompile(() => ex.dispose());
  return [await outcome(ex.init())];
}

/** dispose() at the pool's first postMessage (`when` "before" it goes or "after"), counting the workers spawned then. */
function atFirstPostDispose(when: "before" | "after") {
  return async (ex: WasmExecutor): Promise<readonly [unknown, number]> => {
    let spawned = 0;
    atFirstPost(() => ((spawned = liveWorkers()), ex.dispose()), when);
    const e = await outcome(ex.init());
    return [e, spawned];
  };
}

/** The init messages swallowed (no worker ever gets the module, so none replies), dispose() after the second; counts them. */
async function repliesNeverComing(ex: WasmExecutor): Promise<readonly [unknown, number]> {
  let posts = 0;
  vi.spyOn(Worker.prototype, "postMessage").mockImplementation(() => {
    if (++posts === 2) queueMicrotask(() => ex.dispose());
  });
  const e = await outcome(ex.init());
  return [e, posts];
}

const THREADED: readonly DisposePoint[] = [
  { when: "right after init() is called: init() rejects, no worker starts", run: rightAfterInit },
  { when: "after a microtask", run: afterAMicrotask },
  { when: "once the module is compiled, before it is instantiated", run: onceCompiled, noInstance: true },
  { when: "once the workers are spawned, before any gets the module", run: atFirstPostDispose("before"), counted: 2 },
  { when: "while the workers instantiate the module (their handshake)", run: atFirstPostDispose("after"), counted: 2 },
  // The pool does not wait for the workers' replies once dispose() came: one that never answers is terminated too.
  { when: "while the workers' replies are awaited, one never coming", run: repliesNeverComing, counted: 2 },
  { when: "before init(): init() rejects and starts nothing", run: beforeInit, noInstance: true },
];

const ONE_THREAD: readonly DisposePoint[] = [
  { when: "right after init() is called", run: rightAfterInit, noInstance: true },
  { when: "once the module is compiled", run: onceCompiled, noInstance: true },
];

/** The test of a dispose point on an executor of `threads`: init() rejects disposed, and the executor is gone. */
function disposedAt(threads: number) {
  return async ({ run, noInstance, counted }: DisposePoint): Promise<void> => {
    const ex = executor(threads);
    const [e, n] = await run(ex);
    expectDisposedError(e);
    if (noInstance) expect(ex.stats.instances).toBe(0);
    if (counted !== undefined) expect(n).toBe(counted);
    await expectGone(ex);
  };
}

describe("dispose() while init() is pending (threads: 3)", () => {
  it.each(THREADED)("$when", disposedAt(3));

  // From the compiled module to the workers' spawn (instantiate, the pool's start, its import of worker_threads, the
  // Worker constructors) every step is a microtask away from the last: dispose() lands at each of them in turn.
  it("at each of the 40 microtasks after the module is compiled (the workers spawning)", async () => {
    for (let n = 0; n < 40; n++) {
      const ex = executor(3);
      afterCompile(() => void microtasks(n).then(() => ex.dispose()));
      const e = await outcome(ex.init());
      expectDisposedError(e);
      await expectGone(ex);
    }
  });

  // From the compiled module to init()'s end (the workers load, instantiate the module and reply: events, not
  // microtasks) dispose() lands after each turn of the event loop in turn. Once init() has resolved it stays resolved;
  // the executor is disposed either way.
  it("at each of the 30 turns of the event loop after the module is compiled (the workers starting)", async () => {
    for (let n = 0; n < 30; n++) {
      const ex = executor(3);
      let settled = false;
      let before = false; // whether init() had settled when dispose() came
      afterCompile(() => void turns(n).then(() => ((before = settled), ex.dispose())));
      const e = await outcome(ex.init().finally(() => (settled = true)));
      if (before) expect(e).toBe("resolved");
      else expectDisposedError(e);
      await expectGone(ex);
    }
  });

  it("after init() resolved: the workers are terminated", async () => {
    const ex = executor(3);
    await ex.init();
    expect(ex.threading.threads).toBe(3);
    expect(liveWorkers()).toBe(2);
    ex.dispose();
    ex.dispose(); // a second call changes nothing
    await expectGone(ex);
  });

  // A kernel answering later (it awaits, holding the exports it took) that traps once dispose() came must not bring
  // the module back: a trap otherwise re-instantiates it and restarts the workers.
  it("a kernel in flight that traps after dispose() does not revive the module", async () => {
    const ex = executor(3);
    await ex.init();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const late = (async (call, ctx) => {
      const x = call.inputs[0]!;
      const exports = ctx.exports;
      const desc = ctx.desc(x);
      await gate;
      exports.copy(0xfffff000, desc, 0); // out of bounds: a trap
      return x;
    }) as ChunkedWasmKernel;
    ex.registerKernel("late-trap", late);
    const x = ex.upload(Tensor.from([1, 2], [2]));
    const run = outcome(
      Promise.resolve(
        ex.dispatch({
          kind: "late-trap",
          node: "late",
          attrs: {},
          inputs: [x],
          outShape: [2],
          signal: new AbortController().signal,
        }),
      ),
    );
    const instances = ex.stats.instances;
    ex.dispose();
    open();
    const e = await run;
    expectDisposedError(e);
    expect((e as Error).cause).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(ex.stats.instances).toBe(instances);
    await expectGone(ex);
  });
});

describe("dispose() while init() is pending (one thread)", () => {
  it.each(ONE_THREAD)("$when", disposedAt(1));
});

describe("upload of a transposed dense tensor", () => {
  it("keeps its strides (one plain copy of the span) and reads back, and multiplies, as the dense copy does", async () => {
    const ex = createWasmExecutor();
    await ex.init();
    const w = Tensor.from(
      Array.from({ length: 12 }, (_, i) => i * 0.25 - 1),
      [3, 4],
    ).transpose(0, 1); // [4, 3] as a view: a checkpoint's Conv1D weight read as nn.Linear's
    const kept = ex.upload(w);
    const dense = ex.upload(w.clone());
    expect(kept.strides).toEqual([1, 4]);
    expect(ex.download(kept).toNested()).toEqual(w.toNested());
    const x = ex.upload(Tensor.from([1, -2, 0.5], [1, 3]));
    const project = async (weight: typeof kept) =>
      ex.download(
        (await ex.dispatch({
          kind: "projection",
          node: "p",
          attrs: {},
          inputs: [x, weight],
          outShape: [1, 4],
        })) as typeof kept,
      );
    expect((await project(kept)).toNested()).toEqual((await project(dense)).toNested());
    ex.dispose();
  });
});
