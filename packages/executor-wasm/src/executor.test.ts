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
const TEST_TIMEOUT = 120_000;

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

describe("dispose() while init() is pending (threads: 3)", () => {
  it(
    "right after init() is called: init() rejects, no worker starts",
    async () => {
      const ex = executor(3);
      const init = outcome(ex.init());
      ex.dispose();
      expectDisposedError(await init);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  it(
    "after a microtask",
    async () => {
      const ex = executor(3);
      const init = outcome(ex.init());
      await Promise.resolve();
      ex.dispose();
      expectDisposedError(await init);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  it(
    "once the module is compiled, before it is instantiated",
    async () => {
      const ex = executor(3);
      afterCompile(() => ex.dispose());
      expectDisposedError(await outcome(ex.init()));
      expect(ex.stats.instances).toBe(0);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  // From the compiled module to the workers' spawn (instantiate, the pool's start, its import of worker_threads, the
  // Worker constructors) every step is a microtask away from the last: dispose() lands at each of them in turn.
  it(
    "at each of the 40 microtasks after the module is compiled (the workers spawning)",
    async () => {
      for (let n = 0; n < 40; n++) {
        const ex = executor(3);
        afterCompile(() => void microtasks(n).then(() => ex.dispose()));
        const e = await outcome(ex.init());
        expectDisposedError(e);
        await expectGone(ex);
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "once the workers are spawned, before any gets the module",
    async () => {
      const ex = executor(3);
      let spawned = 0;
      atFirstPost(() => ((spawned = liveWorkers()), ex.dispose()), "before");
      expectDisposedError(await outcome(ex.init()));
      expect(spawned).toBe(2);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  it(
    "while the workers instantiate the module (their handshake)",
    async () => {
      const ex = executor(3);
      let spawned = 0;
      atFirstPost(() => ((spawned = liveWorkers()), ex.dispose()), "after");
      expectDisposedError(await outcome(ex.init()));
      expect(spawned).toBe(2);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  // The pool does not wait for the workers' replies once dispose() came: one that never answers is terminated too.
  it(
    "while the workers' replies are awaited, one never coming",
    async () => {
      const ex = executor(3);
      let posts = 0;
      // The init messages are swallowed: no worker ever gets the module, so none replies.
      vi.spyOn(Worker.prototype, "postMessage").mockImplementation(() => {
        if (++posts === 2) queueMicrotask(() => ex.dispose());
      });
      expectDisposedError(await outcome(ex.init()));
      expect(posts).toBe(2);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  // From the compiled module to init()'s end (the workers load, instantiate the module and reply: events, not
  // microtasks) dispose() lands after each turn of the event loop in turn. Once init() has resolved it stays resolved;
  // the executor is disposed either way.
  it(
    "at each of the 30 turns of the event loop after the module is compiled (the workers starting)",
    async () => {
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
    },
    TEST_TIMEOUT,
  );

  it(
    "after init() resolved: the workers are terminated",
    async () => {
      const ex = executor(3);
      await ex.init();
      expect(ex.threading.threads).toBe(3);
      expect(liveWorkers()).toBe(2);
      ex.dispose();
      ex.dispose(); // a second call changes nothing
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  it(
    "before init(): init() rejects and starts nothing",
    async () => {
      const ex = executor(3);
      ex.dispose();
      expectDisposedError(await outcome(ex.init()));
      expect(ex.stats.instances).toBe(0);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  // A kernel answering later (it awaits, holding the exports it took) that traps once dispose() came must not bring
  // the module back: a trap otherwise re-instantiates it and restarts the workers.
  it(
    "a kernel in flight that traps after dispose() does not revive the module",
    async () => {
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
    },
    TEST_TIMEOUT,
  );
});

describe("dispose() while init() is pending (one thread)", () => {
  it(
    "right after init() is called",
    async () => {
      const ex = executor(1);
      const init = outcome(ex.init());
      ex.dispose();
      expectDisposedError(await init);
      expect(ex.stats.instances).toBe(0);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );

  it(
    "once the module is compiled",
    async () => {
      const ex = executor(1);
      afterCompile(() => ex.dispose());
      expectDisposedError(await outcome(ex.init()));
      expect(ex.stats.instances).toBe(0);
      await expectGone(ex);
    },
    TEST_TIMEOUT,
  );
});
