/// <reference lib="dom" preserve="true" />
// A worker's life, shared by the Node and the browser entries (worker-node.ts, worker-browser.ts): instantiate the
// threaded module over the shared memory (its own globals and per-thread areas: setThreadSlot), then loop: wait for
// the job sequence number to change, take calls from the job's table until none is left, count the pending workers
// down. It never allocates: the host owns the memory and every address.
import { FAILED, PENDING, SEQ, STOP, THREAD_CALLS, controlWords, takeCalls, type WorkerInit, type WorkerReply } from "./control.js";

/**
 * Milliseconds a worker polls SEQ after a job before blocking in Atomics.wait: a wake-up from wait cost 55–275 µs on
 * a 2-core VM, and every job waits for every worker to check in, so the next job, usually the next kernel of the same
 * run, should find the worker still polling.
 */
const SPIN_MS = 1;

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
    let seq = Atomics.load(ctl, SEQ);
    const until = performance.now() + SPIN_MS;
    for (let i = 1; seq === seen; i++) {
      if ((i & 1023) === 0 && performance.now() > until) break;
      seq = Atomics.load(ctl, SEQ);
    }
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
