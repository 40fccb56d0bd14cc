import { describe, expect, it } from "vitest";
import { RunController } from "./run-controller.js";

/** A task whose runs the test finishes by hand, recording what overlapped. */
function harness() {
  const log: string[] = [];
  let active = 0;
  let maxActive = 0;
  const runs: { config: number; signal: AbortSignal; finish: (v?: string) => void; fail: (e: unknown) => void }[] = [];
  const results: string[] = [];
  const errors: string[] = [];
  const cancelled: number[] = [];
  const controller = new RunController<number, string>(
    (config, signal) =>
      new Promise<string>((resolve, reject) => {
        active++;
        maxActive = Math.max(maxActive, active);
        log.push(`start ${config}`);
        const done = () => {
          active--;
          log.push(`end ${config}`);
        };
        // Like Session.run: an abort rejects the run (here at once; the real one between steps).
        signal.addEventListener("abort", () => {
          done();
          reject(signal.reason);
        });
        runs.push({
          config,
          signal,
          finish: (v = `result ${config}`) => {
            done();
            resolve(v);
          },
          fail: (e) => {
            done();
            reject(e);
          },
        });
      }),
    {
      onResult: (r) => results.push(r),
      onError: (e) => errors.push(String(e)),
      onCancelled: (c) => cancelled.push(c),
    },
  );
  return { controller, runs, log, results, errors, cancelled, maxActive: () => maxActive };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("RunController", () => {
  it("delivers the result of a run that nobody superseded", async () => {
    const h = harness();
    h.controller.submit(1);
    expect(h.controller.running).toBe(true);
    h.runs[0]!.finish();
    await h.controller.idle();
    expect(h.results).toEqual(["result 1"]);
    expect(h.controller.running).toBe(false);
  });

  it("aborts the run in flight and runs only the newest config, one run at a time", async () => {
    const h = harness();
    h.controller.submit(1);
    expect(h.runs[0]!.signal.aborted).toBe(false);
    h.controller.submit(2);
    h.controller.submit(3);
    expect(h.runs[0]!.signal.aborted).toBe(true);
    await tick();
    // Config 2 was dropped for 3; 3 started only after 1 had ended.
    expect(h.runs.map((r) => r.config)).toEqual([1, 3]);
    expect(h.log).toEqual(["start 1", "end 1", "start 3"]);
    h.runs[1]!.finish();
    await h.controller.idle();
    expect(h.results).toEqual(["result 3"]);
    expect(h.cancelled).toEqual([1]);
    expect(h.maxActive()).toBe(1);
  });

  it("never interleaves even when the aborted run ignores its signal for a while", async () => {
    const log: string[] = [];
    const finishers: (() => void)[] = [];
    const results: number[] = [];
    const cancelled: number[] = [];
    const controller = new RunController<number, number>(
      (config) =>
        new Promise<number>((resolve) => {
          log.push(`start ${config}`);
          finishers.push(() => {
            log.push(`end ${config}`);
            resolve(config);
          });
        }),
      { onResult: (r) => results.push(r), onError: () => {}, onCancelled: (c) => cancelled.push(c) },
    );
    controller.submit(1);
    controller.submit(2);
    await tick();
    expect(log).toEqual(["start 1"]); // 2 waits: run 1 has not stopped yet
    finishers[0]!(); // run 1 finishes normally, but it was superseded: its result is not shown
    await tick();
    expect(log).toEqual(["start 1", "end 1", "start 2"]);
    finishers[1]!();
    await controller.idle();
    expect(results).toEqual([2]);
    expect(cancelled).toEqual([1]);
  });

  it("reports a failed run as an error and stays usable", async () => {
    const h = harness();
    h.controller.submit(1);
    h.runs[0]!.fail(new Error("kernel exploded"));
    await h.controller.idle();
    expect(h.errors).toEqual(["Error: kernel exploded"]);
    h.controller.submit(2);
    h.runs[1]!.finish();
    await h.controller.idle();
    expect(h.results).toEqual(["result 2"]);
  });

  it("treats a task that throws synchronously as a failed run", async () => {
    const errors: unknown[] = [];
    const controller = new RunController<number, number>(
      () => {
        throw new Error("bad config");
      },
      { onResult: () => {}, onError: (e) => errors.push(e) },
    );
    controller.submit(1);
    await controller.idle();
    expect(String(errors[0])).toContain("bad config");
    expect(controller.running).toBe(false);
  });
});
