// The chunk runner every executor shares (chunks.ts): the synchronous path without a signal or below one chunk, the
// chunk boundaries (whole steps, a yield after each `chunkWork` units), the stop on abort (KernelAbortedError, the
// remaining steps never run) or on an executor's own check, row stepping, and the helpers around them. The
// kernel-level checks (bit-identical chunked results, abort latency on real kernels) stay with each executor
// (executor-cpu and executor-wasm src/chunks.test.ts).
import { afterEach, describe, expect, it, vi } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import {
  KernelAbortedError,
  afterwards,
  chunkSignal,
  overRows,
  rowSteps,
  runSteps,
  withCleanup,
  yieldToEventLoop,
} from "./chunks.js";

const never = () => new AbortController().signal;

/** Steps of the given sizes that log each step they run; `returned()` says whether they were closed (finished or stopped). */
function logged(sizes: readonly number[], log: string[]): Generator<number, void, void> & { returned: () => boolean } {
  let returned = false;
  function* gen(): Generator<number, void, void> {
    try {
      for (let i = 0; i < sizes.length; i++) {
        log.push(`step ${i}`);
        yield sizes[i]!;
      }
    } finally {
      returned = true;
    }
  }
  return Object.assign(gen(), { returned: () => returned });
}

describe("yieldToEventLoop", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("resolves after the event loop had a turn: a setImmediate queued before it runs first", async () => {
    const order: string[] = [];
    setImmediate(() => order.push("immediate"));
    void Promise.resolve().then(() => order.push("microtask"));
    await yieldToEventLoop();
    order.push("yielded");
    expect(order).toEqual(["microtask", "immediate", "yielded"]);
  });

  it("falls back to a MessageChannel where there is no setImmediate (browsers)", async () => {
    vi.stubGlobal("setImmediate", undefined);
    const order: string[] = [];
    void Promise.resolve().then(() => order.push("microtask"));
    await yieldToEventLoop();
    order.push("yielded");
    expect(order).toEqual(["microtask", "yielded"]);
  });
});

describe("KernelAbortedError", () => {
  it("is an AttnGraphError named AbortError, code aborted, naming the node, with the reason as cause", () => {
    const reason = new Error("user cancelled");
    const e = new KernelAbortedError("context.heads", reason);
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("AbortError");
    expect(e.code).toBe("aborted");
    expect(e.subject).toBe("context.heads");
    expect(e.cause).toBe(reason);
    expect(e.message).toBe("context.heads: aborted between two chunks of the kernel");
  });
});

describe("chunkSignal", () => {
  it("is the call's signal only when there is one and the work is over one chunk", () => {
    const signal = never();
    expect(chunkSignal({}, 100, 10)).toBeUndefined();
    expect(chunkSignal({ signal }, 10, 10)).toBeUndefined();
    expect(chunkSignal({ signal }, 11, 10)).toBe(signal);
  });
});

describe("runSteps", () => {
  it("without a signal runs every step at once, synchronously, and answers undefined", () => {
    const log: string[] = [];
    expect(runSteps(logged([5, 5, 5], log), undefined, 1, "n")).toBeUndefined();
    expect(log).toEqual(["step 0", "step 1", "step 2"]);
  });

  it("with a signal pauses after each chunk of whole steps: boundaries where the work done reaches chunkWork", async () => {
    const log: string[] = [];
    // check() runs at each boundary (after the yield and the signal check): it marks where the chunks end.
    const pending = runSteps(logged([3, 3, 3, 1, 10, 2], log), never(), 6, "n", () => void log.push("boundary"));
    expect(pending).toBeInstanceOf(Promise);
    // The steps up to the first boundary run at once, before the Promise is even awaited.
    expect(log).toEqual(["step 0", "step 1"]);
    await pending;
    // 3+3 = 6 → boundary; 3+1 = 4, +10 = 14 → boundary; 2 < 6: the last chunk ends with the steps, no boundary.
    expect(log).toEqual(["step 0", "step 1", "boundary", "step 2", "step 3", "step 4", "boundary", "step 5"]);
  });

  it("stops with a KernelAbortedError at the first boundary after the signal fired; the rest never runs", async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const steps = logged([1, 1, 1, 1], log);
    const pending = runSteps(steps, controller.signal, 1, "weights")!;
    controller.abort("stop");
    const e = await pending.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(KernelAbortedError);
    expect((e as KernelAbortedError).name).toBe("AbortError");
    expect((e as KernelAbortedError).code).toBe("aborted");
    expect((e as KernelAbortedError).cause).toBe("stop");
    expect((e as Error).message).toBe("weights: aborted between two chunks of the kernel");
    expect(log).toEqual(["step 0"]);
    expect(steps.returned(), "the steps were closed (their finally ran)").toBe(true);
  });

  it("stops with what check() returns, checked after the signal, and goes on while it returns undefined", async () => {
    const log: string[] = [];
    let calls = 0;
    const stop = new AttnGraphError("wasm-trap", "n: replaced", { subject: "n" });
    const steps = logged([1, 1, 1, 1], log);
    const e = await runSteps(steps, never(), 1, "n", () => (++calls === 2 ? stop : undefined))!.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBe(stop);
    expect(log).toEqual(["step 0", "step 1"]);
    expect(steps.returned()).toBe(true);

    // An aborted signal wins over the check.
    const controller = new AbortController();
    controller.abort("first");
    const e2 = await runSteps(logged([1, 1], []), controller.signal, 1, "n", () => stop)!.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e2).toBeInstanceOf(KernelAbortedError);

    // Without a signal, the check is never called.
    let never2 = 0;
    expect(runSteps(logged([1, 1], []), undefined, 1, "n", () => ++never2)).toBeUndefined();
    expect(never2).toBe(0);
  });

  it("resolves once every step ran; check() runs only at boundaries, none after the last steps when they end short of one", async () => {
    let checks = 0;
    const log: string[] = [];
    await runSteps(logged([2, 2, 1], log), never(), 2, "n", () => void checks++);
    expect(log).toEqual(["step 0", "step 1", "step 2"]);
    expect(checks).toBe(2);
  });
});

describe("rowSteps and overRows", () => {
  // Rows [0, 10) two at a time: 10 rows of work 3 in chunks of 7, and 10 rows of work 10 in chunks of 25, both fit 2.
  const TEN_ROWS_BY_TWO = [
    [0, 2],
    [2, 4],
    [4, 6],
    [6, 8],
    [8, 10],
  ];

  it("rowSteps: as many whole rows per step as make one chunk (at least one), each step reporting its work", () => {
    const parts: [number, number][] = [];
    const part = (s: number, e: number) => void parts.push([s, e]);
    expect([...rowSteps(10, 3, 7, part)]).toEqual([6, 6, 6, 6, 6]); // floor(7 / 3) = 2 rows a step
    expect(parts).toEqual(TEN_ROWS_BY_TWO);
    parts.length = 0;
    expect([...rowSteps(5, 3, 7, part)]).toEqual([6, 6, 3]); // the last step takes the rows left
    expect(parts).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    parts.length = 0;
    expect([...rowSteps(5, 100, 7, part)]).toEqual([100, 100, 100, 100, 100]); // a row over one chunk: one row a step
    expect(parts).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
    ]);
    parts.length = 0;
    expect([...rowSteps(3, 0, 7, part)]).toEqual([0]); // no work per row: all rows, one step
    expect(parts).toEqual([[0, 3]]);
  });

  it("overRows without a signal, or with one when the work fits one chunk: one synchronous call over all rows", () => {
    const parts: [number, number][] = [];
    const part = (s: number, e: number) => void parts.push([s, e]);
    expect(overRows({ node: "n" }, 4, 100, 10, part)).toBeUndefined();
    expect(overRows({ node: "n", signal: never() }, 1000, 100, 10, part)).toBeUndefined();
    expect(parts).toEqual([
      [0, 100],
      [0, 100],
    ]);
  });

  it("overRows with a signal and more than one chunk: chunks of whole rows covering [0, rows) once, in order", async () => {
    const parts: [number, number][] = [];
    const pending = overRows({ node: "n", signal: never() }, 25, 10, 10, (s, e) => void parts.push([s, e]));
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    expect(parts).toEqual(TEN_ROWS_BY_TWO);
  });

  it("overRows passes the check on, and stops on abort naming the call's node", async () => {
    const stop = new Error("replaced");
    const e = await overRows(
      { node: "n", signal: never() },
      1,
      4,
      1,
      () => {},
      () => stop,
    )!.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBe(stop);
    const controller = new AbortController();
    const rowsDone: number[] = [];
    const pending = overRows({ node: "scores", signal: controller.signal }, 1, 4, 1, (s) => void rowsDone.push(s))!;
    controller.abort();
    const e2 = await pending.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((e2 as Error).message).toBe("scores: aborted between two chunks of the kernel");
    expect(rowsDone).toEqual([0]);
  });
});

describe("afterwards and withCleanup", () => {
  it("afterwards: f() at once when nothing is pending, else once pending resolves", async () => {
    expect(afterwards(undefined, () => 7)).toBe(7);
    let resolve!: () => void;
    const later = afterwards(new Promise<void>((r) => (resolve = r)), () => 8);
    expect(later).toBeInstanceOf(Promise);
    resolve();
    expect(await later).toBe(8);
  });

  it("withCleanup: cleans up at once after a synchronous run or a throw, else when the Promise settles", async () => {
    let cleaned = 0;
    const cleanup = () => void cleaned++;
    expect(withCleanup(() => undefined, cleanup)).toBeUndefined();
    expect(cleaned).toBe(1);

    const boom = new Error("boom");
    expect(() =>
      withCleanup(() => {
        throw boom;
      }, cleanup),
    ).toThrow(boom);
    expect(cleaned).toBe(2);

    let resolve!: () => void;
    const ok = withCleanup(() => new Promise<void>((r) => (resolve = r)), cleanup);
    expect(cleaned).toBe(2);
    resolve();
    await ok;
    expect(cleaned).toBe(3);

    const failed = withCleanup(() => Promise.reject(boom), cleanup)!;
    await expect(failed).rejects.toBe(boom);
    expect(cleaned).toBe(4);
  });
});
