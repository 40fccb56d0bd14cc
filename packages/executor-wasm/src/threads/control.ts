// The control block the host and the workers share: int32 words in the module's shared memory, read and written only
// with Atomics where another thread may be looking. A job is a list of calls (chunks of one kernel's work, more
// chunks than threads): the host writes them into the call table, sets COUNT, NEXT = 0 and PENDING to the number of
// workers, and bumps SEQ. Every thread, the host's included, then takes the next call with an atomic add on NEXT
// until none is left, so a thread slowed by something else on its core takes fewer; each worker then counts PENDING
// down and the last wakes the host. No imports: the workers (serve.ts) share this file and nothing else of the host.

/** A job's sequence number; a worker takes part in one job per change. */
export const SEQ = 0;
/** Workers still in the current job. */
export const PENDING = 1;
/** Calls that threw on a worker in the current job (a trap). */
export const FAILED = 2;
/** Non-zero: workers leave their loop (the pool is stopping). */
export const STOP = 3;
/** The next call of the table to take (atomic add). */
export const NEXT = 4;
/** Calls in the table this job. */
export const COUNT = 5;
/** Words per call: its kind, then up to CALL_WORDS − 1 int32 arguments. */
export const CALL_WORDS = 16;
/** The call table starts after the header (one call's worth of words). */
export const TABLE = CALL_WORDS;
/** Calls per thread a kernel may cut its work into (so that a slower thread can take fewer). */
export const CALLS_PER_THREAD = 4;
/** The most calls one job holds for `threads` threads. */
export const maxCalls = (threads: number): number => CALLS_PER_THREAD * threads;

/**
 * Milliseconds a thread polls before it blocks in Atomics.wait, a worker for the next job and the host for the
 * workers' shares of this one: a wake-up from wait cost 55–275 µs on a 2-core VM, more than a decoding step's whole
 * matrix–vector product, and the next job is usually the next kernel of the same run.
 */
export const SPIN_MS = 1;

/** Polls while `busy()` holds, for at most `ms` (the clock read once every 1024 polls); then returns either way. */
export function pollWhile(busy: () => boolean, ms: number): void {
  const until = performance.now() + ms;
  for (let i = 1; busy(); i++) if ((i & 1023) === 0 && performance.now() > until) return;
}
/** Int32 words of the control block for `threads` threads. */
export const controlWords = (threads: number): number => TABLE + CALL_WORDS * maxCalls(threads);

/**
 * The module exports a thread may run, by the code the host writes in a call (0: none). Every argument is an int32
 * (addresses, counts, strides); kernels that need floats read them from a params block in memory.
 */
export const THREAD_CALLS = [
  "",
  "matmul",
  "matmulPacked",
  "matvecPackedColumns",
  "attentionRun",
  "attentionDecode",
] as const;
export type ThreadCallName = Exclude<(typeof THREAD_CALLS)[number], "">;

/** The init message a worker gets once: the compiled module, the shared memory, its slot and the control block. */
export interface WorkerInit {
  readonly module: WebAssembly.Module;
  readonly memory: WebAssembly.Memory;
  /** This worker's thread slot (1 ..): its copy of the module's per-thread areas. */
  readonly slot: number;
  readonly threads: number;
  /** Byte address of the control block. */
  readonly control: number;
}

/** What a worker posts back: ready after instantiating, or the reason it could not. */
export type WorkerReply = { readonly ready: true } | { readonly ready: false; readonly error: string };

/**
 * Takes calls from the table until none is left, running each with `run`; returns how many threw (a throw is counted
 * and the taking goes on, so every call is taken). Used by the workers and by the host alike.
 */
export function takeCalls(ctl: Int32Array, run: (code: number, args: number[]) => void): number {
  const count = Atomics.load(ctl, COUNT);
  let failed = 0;
  for (let i = Atomics.add(ctl, NEXT, 1); i < count; i = Atomics.add(ctl, NEXT, 1)) {
    const at = TABLE + CALL_WORDS * i;
    const args: number[] = [];
    for (let w = 1; w < CALL_WORDS; w++) args.push(ctl[at + w]!);
    try {
      run(ctl[at]!, args);
    } catch {
      failed++;
    }
  }
  return failed;
}
