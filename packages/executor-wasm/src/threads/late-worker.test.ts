// The job protocol against a real worker thread that is late on purpose: it runs serve.ts's loop (nextJob, then
// takeCalls with callRunner, from dist/) with a gate before each takeCalls that the test opens, so it can be held
// asleep while the host runs a job alone, writes the next one, opens it. The host's side is ThreadPool.run's
// (writeCalls, openJob, takeCalls, waitForCalls). A fake call writes its value into `out` and counts its runs.
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import {
  DONE,
  FAILED,
  NEXT,
  SEQ,
  STOP,
  controlWords,
  nextWord,
  openJob,
  takeCalls,
  waitForCalls,
  writeCalls,
  type ThreadCall,
} from "./control.js";

const SLOTS = 16;
const ctl = new Int32Array(new SharedArrayBuffer(4 * controlWords(2)));
/** [0]: takeCalls the worker may start; [1]: those it finished; [2]: calls it ran in its last one; [3]: the job it
 * holds at the gate. */
const gate = new Int32Array(new SharedArrayBuffer(16));
/** [slot]: the value the last call on it wrote; [SLOTS + slot]: how many calls ran on it. */
const out = new Int32Array(new SharedArrayBuffer(8 * SLOTS));

// A call's arguments: slot, value, then milliseconds to spin and 1 to throw (a trap).
const FAKE_WORKER = `
const { workerData, parentPort } = require("node:worker_threads");
(async () => {
  const { nextJob, takeCalls, SEQ, STOP } = await import(workerData.control);
  const { callRunner } = await import(workerData.serve);
  const ctl = new Int32Array(workerData.ctl), gate = new Int32Array(workerData.gate), out = new Int32Array(workerData.out);
  const runAt = callRunner(ctl, (code, [slot, value, ms, fail]) => {
    for (const until = performance.now() + ms; performance.now() < until; );
    if (fail === 1) throw new Error("trap");
    Atomics.store(out, slot, value);
    Atomics.add(out, ${SLOTS} + slot, 1);
  });
  const first = Atomics.load(ctl, SEQ);
  parentPort.postMessage("ready");
  for (let seq = nextJob(ctl, first); Atomics.load(ctl, STOP) === 0; seq = nextJob(ctl, seq)) {
    const n = Atomics.load(gate, 1);
    Atomics.store(gate, 3, seq);
    Atomics.notify(gate, 3);
    for (let open = Atomics.load(gate, 0); open <= n; open = Atomics.load(gate, 0)) Atomics.wait(gate, 0, open);
    Atomics.store(gate, 2, takeCalls(ctl, seq, runAt));
    Atomics.add(gate, 1, 1);
    Atomics.notify(gate, 1);
  }
})();`;

const dist = (file: string) => new URL(`../../dist/threads/${file}`, import.meta.url).href;
const worker = new Worker(FAKE_WORKER, {
  eval: true,
  workerData: {
    control: dist("control.js"),
    serve: dist("serve.js"),
    ctl: ctl.buffer,
    gate: gate.buffer,
    out: out.buffer,
  },
});
await new Promise((resolve, reject) => {
  worker.once("message", resolve);
  worker.once("error", reject);
});
afterAll(async () => {
  Atomics.store(ctl, STOP, 1);
  Atomics.add(ctl, SEQ, 1);
  Atomics.notify(ctl, SEQ);
  Atomics.add(gate, 0, 1);
  Atomics.notify(gate, 0);
  await worker.terminate();
});

/** Lets the worker's next takeCalls start and waits (at most 5 s) until it has returned; the calls it ran. */
function letWorkerTry(): number {
  const n = Atomics.load(gate, 1);
  Atomics.add(gate, 0, 1);
  Atomics.notify(gate, 0);
  const until = performance.now() + 5000;
  while (Atomics.load(gate, 1) === n && performance.now() < until) Atomics.wait(gate, 1, n, 50);
  expect(Atomics.load(gate, 1)).toBe(n + 1);
  return Atomics.load(gate, 2);
}

/** Waits (at most 5 s) until the worker holds job `seq` at its gate: it has seen the job open. */
function workerHolds(seq: number): void {
  const until = performance.now() + 5000;
  for (let at = Atomics.load(gate, 3); at !== seq && performance.now() < until; at = Atomics.load(gate, 3))
    Atomics.wait(gate, 3, at, 50);
  expect(Atomics.load(gate, 3)).toBe(seq);
}

/** `values.length` calls, call i writing values[i] into slot i, spinning `ms` first. */
const calls = (values: number[], ms = 0): ThreadCall[] =>
  values.map((value, slot) => ({ name: "matmul", args: [slot, value, ms, value < 0 ? 1 : 0] }));

/** The host's share, as ThreadPool.run runs it: calls it claims, run here; `before(i)` first. */
function hostTakes(seq: number, job: ThreadCall[], before: (i: number) => void = () => {}): number {
  return takeCalls(ctl, seq, (i) => {
    before(i);
    const [slot, value, ms] = job[i]!.args as [number, number, number];
    for (const until = performance.now() + ms; performance.now() < until; );
    Atomics.store(out, slot, value);
    Atomics.add(out, SLOTS + slot, 1);
  });
}

const runs = () => Array.from(out.subarray(SLOTS, 2 * SLOTS));
const values = (n: number) => Array.from(out.subarray(0, n));

describe("a late worker", () => {
  it("is not waited for, takes nothing of a job it did not see open, and takes part once it catches up", () => {
    // Job 1: the worker saw it open but is held at its gate; the host runs every call and the job is done, without
    // the worker ever checking in (the old protocol counted workers: it would wait here for ever).
    const one = calls([11, 12, 13, 14, 15, 16]);
    writeCalls(ctl, one);
    const s1 = openJob(ctl, one.length);
    workerHolds(s1);
    expect(hostTakes(s1, one)).toBe(6);
    expect(Atomics.load(ctl, DONE)).toBe(6);
    expect(waitForCalls(ctl, one.length, true)).toBe(true);
    expect(values(6)).toEqual([11, 12, 13, 14, 15, 16]);

    // Job 2 written (larger, not open yet): the worker wakes, still on job 1, and claims nothing.
    const two = calls([21, 22, 23, 24, 25, 26, 27, 28]);
    writeCalls(ctl, two);
    expect(letWorkerTry()).toBe(0);
    expect(runs().slice(0, 8)).toEqual([1, 1, 1, 1, 1, 1, 0, 0]);

    // Job 2 open: the worker, now on job 2, is held again; the host runs it alone, writes and opens job 3; the
    // worker wakes on job 2 and claims nothing of job 3, though its calls are all there to take.
    const s2 = openJob(ctl, two.length);
    workerHolds(s2);
    expect(hostTakes(s2, two)).toBe(8);
    waitForCalls(ctl, two.length, true);
    const three = calls([31, 32, 33, 34, 35, 36, 37, 38], 2);
    writeCalls(ctl, three);
    const s3 = openJob(ctl, three.length);
    expect(letWorkerTry()).toBe(0);
    workerHolds(s3);
    expect(Atomics.load(ctl, NEXT)).toBe(nextWord(s3, 8, 0));

    // Job 3 with the worker let through: both take calls (the host waits in its first call until the worker has
    // claimed one), and the host waits for the worker's calls to finish.
    Atomics.add(gate, 0, 1);
    Atomics.notify(gate, 0);
    const until = performance.now() + 5000;
    const host = hostTakes(s3, three, (i) => {
      if (i === 0) while ((Atomics.load(ctl, NEXT) & 0xff) < 2 && performance.now() < until);
    });
    waitForCalls(ctl, three.length, true);
    expect(Atomics.load(ctl, DONE)).toBe(8);
    expect(values(8)).toEqual([31, 32, 33, 34, 35, 36, 37, 38]);
    expect(runs().slice(0, 8)).toEqual([3, 3, 3, 3, 3, 3, 2, 2]); // jobs 1, 2, 3 (slots 6, 7: 2 and 3)
    const until2 = performance.now() + 5000;
    while (Atomics.load(gate, 1) < 3 && performance.now() < until2) Atomics.wait(gate, 1, 2, 50);
    expect(host + Atomics.load(gate, 2)).toBe(8);
    expect(Atomics.load(gate, 2)).toBeGreaterThan(0);
  });

  it("counts a call that trapped on it in FAILED before the job is done", () => {
    const job = calls([41, -1, 43, 44], 1);
    Atomics.add(gate, 0, 1); // the worker may take part at once
    Atomics.notify(gate, 0);
    const seen = Atomics.load(gate, 1);
    writeCalls(ctl, job);
    const seq = openJob(ctl, job.length);
    const until = performance.now() + 5000;
    // The host takes nothing until the worker has taken every call (the trapping one included).
    while ((Atomics.load(ctl, NEXT) & 0xff) < 4 && performance.now() < until);
    expect(hostTakes(seq, job)).toBe(0);
    waitForCalls(ctl, job.length, true);
    expect([Atomics.load(ctl, DONE), Atomics.load(ctl, FAILED)]).toEqual([4, 1]);
    expect(values(4)).toEqual([41, 32, 43, 44]);
    while (Atomics.load(gate, 1) === seen && performance.now() < until) Atomics.wait(gate, 1, seen, 50);
    expect(Atomics.load(gate, 2)).toBe(4);
  });
});
