/// <reference lib="dom" preserve="true" />
// A worker's life, shared by the Node and the browser entries (worker-node.ts, worker-browser.ts): instantiate the
// threaded module over the shared memory (its own globals and per-thread areas: setThreadSlot), then loop: wait for
// the job sequence number to change, run the call in its slot, count the pending workers down. It never allocates:
// the host owns the memory and every address.
import { FAILED, PENDING, SEQ, SLOT_WORDS, STOP, THREAD_CALLS, type WorkerInit, type WorkerReply } from "./control.js";

/** Loop trips spent polling SEQ before blocking in Atomics.wait (a wake-up from wait costs tens of microseconds). */
const SPIN = 20000;

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
  const ctl = new Int32Array(init.memory.buffer, init.control, SLOT_WORDS * init.threads);
  // The sequence number as it is before "ready": the host posts no job until every worker is ready, so a job it
  // posts the moment this reply lands is a change from this value (read after the reply, it could be missed).
  const seen = Atomics.load(ctl, SEQ);
  post({ ready: true });
  serve(init, exports, ctl, seen);
}

function serve(init: WorkerInit, exports: Exports, ctl: Int32Array, first: number): void {
  const slot = SLOT_WORDS * init.slot;
  let seen = first;
  for (;;) {
    let seq = Atomics.load(ctl, SEQ);
    for (let i = 0; seq === seen && i < SPIN; i++) seq = Atomics.load(ctl, SEQ);
    if (seq === seen) {
      Atomics.wait(ctl, SEQ, seen);
      continue;
    }
    seen = seq;
    if (Atomics.load(ctl, STOP) !== 0) return;
    const code = ctl[slot]!;
    if (code > 0) {
      try {
        const args: number[] = [];
        for (let i = 1; i < SLOT_WORDS; i++) args.push(ctl[slot + i]!);
        exports[THREAD_CALLS[code]!]!(...args);
      } catch {
        Atomics.add(ctl, FAILED, 1);
      }
    }
    if (Atomics.sub(ctl, PENDING, 1) === 1) Atomics.notify(ctl, PENDING);
  }
}
