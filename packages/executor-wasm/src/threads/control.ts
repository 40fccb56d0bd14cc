// The control block the host and the workers share: int32 words in the module's shared memory, read and written only
// with Atomics where another thread may be looking. The host writes each worker's call into its slot, sets PENDING to
// the number of workers and bumps SEQ; a worker that sees SEQ change runs its slot's call (if any), counts PENDING
// down and wakes the host at zero. No imports: the workers (serve.ts) share this file and nothing else of the host.

/** A job's sequence number; a worker runs one job per change. */
export const SEQ = 0;
/** Workers still running the current job. */
export const PENDING = 1;
/** Workers whose call threw in the current job (a trap). */
export const FAILED = 2;
/** Non-zero: workers leave their loop (the pool is stopping). */
export const STOP = 3;
/** Words per slot: the call's kind, then up to SLOT_WORDS − 1 int32 arguments. */
export const SLOT_WORDS = 16;
/** Slot s (worker s, 1 ..) starts at word SLOT_WORDS · s; slot 0's words hold the header above. */
export const controlWords = (threads: number): number => SLOT_WORDS * threads;

/**
 * The module exports a worker may run, by the code the host writes in a slot (0: nothing this job). Every argument is
 * an int32 (addresses, counts, strides); kernels that need floats read them from a params block in memory.
 */
export const THREAD_CALLS = ["", "matmul", "matmulPacked", "matvecPackedColumns", "attentionRun"] as const;
export type ThreadCallName = Exclude<(typeof THREAD_CALLS)[number], "">;

/** The init message a worker gets once: the compiled module, the shared memory, its slot and the control block. */
export interface WorkerInit {
  readonly module: WebAssembly.Module;
  readonly memory: WebAssembly.Memory;
  readonly slot: number;
  readonly threads: number;
  /** Byte address of the control block. */
  readonly control: number;
}

/** What a worker posts back: ready after instantiating, or the reason it could not. */
export type WorkerReply = { readonly ready: true } | { readonly ready: false; readonly error: string };
