// Which thread an instance runs on. The threaded flavours share one memory between the host's instance and one
// instance per worker, so a kernel's fixed scratch (memory.data) would be shared too; instead each such area holds
// MAX_THREADS copies and an instance uses the copy of its slot. Globals are per instance, so `threadSlot` is each
// instance's own: 0 on the host's, the worker's index on a worker's (set once at start by the pool).

/** Most threads (host included) a threaded executor runs; every per-thread area has this many copies. */
export const MAX_THREADS: i32 = 16;

/** This instance's slot, 0 .. MAX_THREADS - 1. */
export let threadSlot: i32 = 0;

/** Sets this instance's slot (the worker pool calls it once per worker instance, before any kernel). */
export function setThreadSlot(slot: i32): void {
  threadSlot = slot < 0 || slot >= MAX_THREADS ? 0 : slot;
}

/** MAX_THREADS, for the host. */
export function maxThreads(): i32 {
  return MAX_THREADS;
}
