/// <reference lib="dom" preserve="true" />
// A worker's life, shared by the Node and the browser entries (worker-node.ts, worker-browser.ts): instantiate the
// threaded module over the shared memory (its own globals and per-thread areas: setThreadSlot), then loop: wait for
// the job sequence number to change, take calls from the job's table until none is left, count the pending workers
// down. It never allocates: the host owns the memory and every address.
import {
  FAILED,
  PENDING,
  SEQ,
  SPIN_MS,
  STOP,
  THREAD_CALLS,
  controlWords,
  pollWhile,
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
  serve(exports, ctl, seen);
}

function serve(exports: Exports, ctl: Int32Array, first: number): void {
  const run = (code: number, args: number[]) => exports[THREAD_CALLS[code]!]!(...args);
  let seen = first;
  for (;;) {
    // Every job waits for every worker to check in: the next one should find this worker still polling.
    let seq = seen;
    pollWhile(() => (seq = Atomics.load(ctl, SEQ)) === seen, SPIN_MS);
    if (seq === seen) {
      Atomics.wait(ctl, SEQ, seen);
      continue;
    }
    seen = seq;
    if (Atomics.load(ctl, STOP) !== 0) return;
    const failed = takeCalls(ctl, run);
    if (failed > 0) Atomics.add(ctl, FAILED, failed);
    if (Atomics.sub(ctl, PENDING, 1) === 1) Atomics.notify(ctl, PENDING);
  }
}
