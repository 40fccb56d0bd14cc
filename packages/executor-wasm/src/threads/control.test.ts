// The job protocol of the control block, driven by hand on one thread (no workers), with a "late worker" placed at
// each step of the host's: every call claimed once; a worker still holding an older job's number claims nothing,
// whether the job is over, the next one written but not open, or open; a job is done when its calls are, whoever ran
// them. late-worker.test.ts runs the same protocol against a real worker thread.
import { describe, expect, it } from "vitest";
import {
  CALL_WORDS,
  DONE,
  FAILED,
  MAX_CALLS,
  NEXT,
  SEQ,
  TABLE,
  maxCalls,
  nextWord,
  openJob,
  takeCalls,
  writeCalls,
  type ThreadCall,
  controlWords,
} from "./control.js";
import { callRunner } from "./serve.js";

/** `count` calls whose first argument says which job and which call they are: 100·job + index. */
const job = (n: number, count: number): ThreadCall[] =>
  Array.from({ length: count }, (_, i) => ({ name: "matmul", args: [100 * n + i] }));

/** Claims and runs calls of job `seq` as a worker does, reading each call's first argument from the table. */
function worker(ctl: Int32Array, seq: number): number[] {
  const ran: number[] = [];
  takeCalls(ctl, seq, (i) => ran.push(ctl[TABLE + CALL_WORDS * i + 1]!));
  return ran;
}

describe("the thread pool's control block", () => {
  it("every call of a job is claimed once, in order, then none; the job is done when all are", () => {
    const ctl = new Int32Array(controlWords(2));
    writeCalls(ctl, job(1, 3));
    const seq = openJob(ctl, 3);
    expect(seq).toBe(1);
    expect(Atomics.load(ctl, NEXT)).toBe(nextWord(1, 3, 0));
    const first: number[] = [];
    // The host takes one call, a worker the others (as if it woke while the host ran its first).
    takeCalls(ctl, seq, (i) => {
      first.push(i);
      if (first.length === 1) expect(worker(ctl, seq)).toEqual([101, 102]);
    });
    expect(first).toEqual([0]);
    expect([Atomics.load(ctl, DONE), Atomics.load(ctl, NEXT)]).toEqual([3, nextWord(1, 3, 3)]);
    expect(worker(ctl, seq)).toEqual([]);
  });

  it("a worker still on the last job claims nothing of the next: written, open, or one more job on", () => {
    const ctl = new Int32Array(controlWords(2));
    writeCalls(ctl, job(1, 2));
    const one = openJob(ctl, 2);
    worker(ctl, one); // a worker that was awake ran job 1; the late one read SEQ = 1 and slept through it
    // A larger job: a count read apart from the claim word (3 > 2) would make call 2 of job 2 look claimable.
    writeCalls(ctl, job(2, 5));
    expect(worker(ctl, one)).toEqual([]);
    const two = openJob(ctl, 5);
    expect(worker(ctl, one)).toEqual([]);
    expect(Atomics.load(ctl, NEXT)).toBe(nextWord(two, 5, 0));
    expect(worker(ctl, two)).toEqual([200, 201, 202, 203, 204]);
    writeCalls(ctl, job(3, 4));
    const three = openJob(ctl, 4);
    expect([worker(ctl, one), worker(ctl, two)]).toEqual([[], []]);
    expect(worker(ctl, three)).toEqual([300, 301, 302, 303]);
  });

  it("the claim word holds a job's tag, count and index: every pool size fits, a wrapped sequence number too", () => {
    expect(maxCalls(16)).toBeLessThanOrEqual(MAX_CALLS); // the executor's most threads
    expect(nextWord(0x12345, 64, 7)).toBe((0x2345 << 16) | (64 << 8) | 7);
    // SEQ is an int32: past 2^31 − 1 it wraps to a negative number, and the tags still match.
    const ctl = new Int32Array(controlWords(16));
    Atomics.store(ctl, SEQ, 0x7fffffff);
    writeCalls(ctl, job(9, maxCalls(16)));
    const seq = openJob(ctl, maxCalls(16));
    expect(seq).toBe(-0x80000000);
    expect(worker(ctl, seq)).toHaveLength(64);
    expect(Atomics.load(ctl, DONE)).toBe(64);
    expect(() => writeCalls(ctl, job(10, MAX_CALLS + 1))).toThrow(RangeError);
  });

  it("a call that throws on a worker is counted in FAILED before DONE, and the taking goes on", () => {
    const ctl = new Int32Array(controlWords(2));
    writeCalls(ctl, job(1, 4));
    const seq = openJob(ctl, 4);
    const seen: number[] = [];
    const runAt = callRunner(ctl, (code, args) => {
      expect(code).toBe(1); // THREAD_CALLS.indexOf("matmul")
      seen.push(args[0]!);
      if (args[0] === 102) {
        expect([Atomics.load(ctl, FAILED), Atomics.load(ctl, DONE)]).toEqual([0, 2]);
        throw new Error("trap");
      }
    });
    takeCalls(ctl, seq, (i) => {
      const done = Atomics.load(ctl, DONE);
      runAt(i);
      if (i === 2) expect([Atomics.load(ctl, FAILED), Atomics.load(ctl, DONE)]).toEqual([1, done]);
    });
    expect(seen).toEqual([100, 101, 102, 103]);
    expect([Atomics.load(ctl, FAILED), Atomics.load(ctl, DONE)]).toEqual([1, 4]);
    // The next job starts with neither.
    writeCalls(ctl, job(2, 2));
    openJob(ctl, 2);
    expect([Atomics.load(ctl, FAILED), Atomics.load(ctl, DONE)]).toEqual([0, 0]);
  });
});
