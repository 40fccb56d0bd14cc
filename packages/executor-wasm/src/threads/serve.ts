/// <reference lib="dom" preserve="true" />
// A worker's life, shared by the Node and the browser entries (worker-node.ts, worker-browser.ts): instantiate the
// threaded module over the shared memory (its own globals and per-thread areas: setThreadSlot), then loop: wait for
// the job sequence number to change, claim calls of that job until none is left (control.ts: takeCalls counts each
// finished one in DONE; a late worker, the job over or the next one being written, claims nothing). It never
// allocates: the host owns the memory and every address.
import {
  CALL_WORDS,
  FAILED,
  SEQ,
  STOP,
  TABLE,
  THREAD_CALLS,
  controlWords,
  nextJob,
  takeCalls,
  type WorkerInit,
  type WorkerReply,
} from "./control.js";

type Exports = Record<string, (...args: number[]) => unknown> & { setThreadSlot(slot: number): void };

/** Instantiates the module for `init`, posts the reply, and serves jobs until the pool stops. */
export function startWorker(init: WorkerInit, post: (reply: WorkerReply) => void): void {
  let exports: Exports;
  try {
    exports = new WebAssembly.Instance(init.module, { env: { memory: init.memory } }).exports as unknown as Exports;
    exports.setThreadSlot(init.slot);
  } catch (e) {
    post({ ready: false, error: e instanceof Error ? e.message : String(e) });
    return;
  }
  const ctl = new Int32Array(init.memory.buffer, init.control, controlWords(init.threads));
  // The sequence number as it is before "ready": the host posts no job until every worker is ready, so a job it
  // posts the moment this reply lands is a change from this value (read after the reply, it could be missed).
  const seen = Atomics.load(ctl, SEQ);
  post({ ready: true });
  serve(ctl, seen, (code, args) => exports[THREAD_CALLS[code]!]!(...args));
}

/**
 * Serves jobs after job `first` until the pool stops: waits for the next job, claims and runs its calls (callRunner)
 * until none is left, and waits again.
 */
export function serve(ctl: Int32Array, first: number, run: (code: number, args: number[]) => void): void {
  const runAt = callRunner(ctl, run);
  for (let seq = nextJob(ctl, first); Atomics.load(ctl, STOP) === 0; seq = nextJob(ctl, seq))
    takeCalls(ctl, seq, runAt);
}

/**
 * Runs the table's call at an index this worker claimed, with `run`: its words are read only now, after the claim.
 * A throw (a trap) is counted in FAILED, before takeCalls counts the call done, and the taking goes on.
 */
export function callRunner(ctl: Int32Array, run: (code: number, args: number[]) => void): (index: number) => void {
  return (index) => {
    const at = TABLE + CALL_WORDS * index;
    const args: number[] = [];
    for (let w = 1; w < CALL_WORDS; w++) args.push(ctl[at + w]!);
    try {
      run(ctl[at]!, args);
    } catch {
      Atomics.add(ctl, FAILED, 1);
    }
  };
}
