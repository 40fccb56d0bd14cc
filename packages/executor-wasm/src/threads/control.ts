// The control block the host and the workers share: int32 words in the module's shared memory, read and written only
// with Atomics where another thread may be looking. A job is a list of calls (chunks of one kernel's work, more
// chunks than threads). The host writes them into the call table, zeroes DONE and FAILED, opens the job (NEXT: the
// job's tag, its call count, index 0), bumps SEQ and wakes the workers (writeCalls, openJob). Every thread, the host's included,
// then claims the next call with a compare-and-swap on NEXT until none is left (takeCalls), so a thread slowed by
// something else on its core takes fewer; whoever finishes a call counts DONE up, and whoever finishes the last wakes
// the host. The job is over when DONE reaches its count, whoever ran the calls: the host never waits for a worker that
// took none (one asleep in Atomics.wait after an idle spell took up to 4 ms to wake on a 2-core VM; the host, which
// once counted workers, not calls, waited for it even when it had run every call itself).
//
// Why a worker never runs a call it should not (a late one: it read SEQ, then was descheduled while the job ended and
// the host began writing the next one):
// - NEXT holds the count beside the index, so one atomic read says whether a call is left. A job's last claim leaves
//   NEXT at index = count, and the host writes the next job's table only after DONE = count, i.e. after every call was
//   claimed, run and counted: while it writes, nothing can be claimed. A separate COUNT word would not do: a worker
//   could read the new job's COUNT beside the old job's NEXT and claim a call whose words are being written.
// - NEXT is opened after the table is written (plain stores before a seq-cst store); a claim is a seq-cst
//   compare-and-swap that reads that value or a later claim's, so the claimer sees the whole table. It reads its call's
//   words only after the claim, and counts DONE only after running it: the host, which rewrites the table only once
//   DONE = count, never changes words a claimed call has yet to read. DONE and FAILED are zeroed before NEXT opens, so
//   every count of this job lands after the zeroing; a call that throws is counted in FAILED before DONE.
// - The tag (SEQ's low 16 bits) keeps a worker to the job it was woken for: one that read SEQ = s claims nothing of
//   job s + 1. The above does not rest on it: a claim that succeeds is of the job open now, whatever tag the claimer
//   expected (after 65536 jobs the tags repeat): a word with index < count exists only while a job is open, and the
//   compare-and-swap succeeds only on the word as it is now.
// No imports: the workers (serve.ts) share this file and nothing else of the host.

/** A job's sequence number; a worker takes part in one job per change. */
export const SEQ = 0;
/** Calls of the current job finished (run, or thrown and counted in FAILED). */
export const DONE = 1;
/** Calls that threw on a worker in the current job (a trap). */
export const FAILED = 2;
/** Non-zero: workers leave their loop (the pool is stopping). */
export const STOP = 3;
/** The claim word: the job's tag (16 bits), its call count (8 bits), the next call to take (8 bits). See nextWord. */
export const NEXT = 4;
/** Words per call: its kind, then up to CALL_WORDS − 1 int32 arguments. */
export const CALL_WORDS = 16;
/** The call table starts after the header (one call's worth of words). */
export const TABLE = CALL_WORDS;
/** Calls per thread a kernel may cut its work into (so that a slower thread can take fewer). */
export const CALLS_PER_THREAD = 4;
/** The most calls one job holds for `threads` threads. */
export const maxCalls = (threads: number): number => CALLS_PER_THREAD * threads;
/** The most calls the claim word can count (8 bits of count and of index): 63 threads, 4 calls each. */
export const MAX_CALLS = 0xff;

/** The claim word of job `seq` with `count` calls, `index` of them taken: (seq & 0xffff) << 16 | count << 8 | index. */
export const nextWord = (seq: number, count: number, index: number): number =>
  ((seq & 0xffff) << 16) | (count << 8) | index;

/**
 * Milliseconds a thread polls before it blocks in Atomics.wait, a worker for the next job and the host for the
 * workers' calls of this one: a wake-up from wait cost 55–275 µs on a 2-core VM, more than a decoding step's whole
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

/** One call of a module export with int32 arguments (at most CALL_WORDS − 1 of them). */
export interface ThreadCall {
  readonly name: ThreadCallName;
  readonly args: readonly number[];
}

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
 * The host's first step of a job: writes `calls` into the table (plain stores: no call can be claimed now, the last
 * job's claim word being spent). Only once the last job is over (DONE at its count), or before the first.
 */
export function writeCalls(ctl: Int32Array, calls: readonly ThreadCall[]): void {
  if (calls.length > MAX_CALLS)
    throw new RangeError(`thread pool: ${calls.length} calls in one job, at most ${MAX_CALLS}`);
  calls.forEach((call, i) => {
    const at = TABLE + CALL_WORDS * i;
    ctl[at] = THREAD_CALLS.indexOf(call.name);
    for (let w = 0; w < call.args.length; w++) ctl[at + 1 + w] = call.args[w]!;
  });
}

/**
 * The host's second step: opens the job of the `count` calls just written (DONE and FAILED zeroed, then NEXT, then
 * SEQ, in that order) and wakes the workers. Returns the job's sequence number.
 */
export function openJob(ctl: Int32Array, count: number): number {
  const seq = (Atomics.load(ctl, SEQ) + 1) | 0;
  Atomics.store(ctl, DONE, 0);
  Atomics.store(ctl, FAILED, 0);
  Atomics.store(ctl, NEXT, nextWord(seq, count, 0));
  Atomics.store(ctl, SEQ, seq);
  Atomics.notify(ctl, SEQ);
  return seq;
}

/**
 * Claims calls of job `seq` and runs each (`run(index)`: it reads the call's words, if it needs them, and must not
 * throw) until the job has none left or is not the one open; counts each in DONE once it ran, and wakes the host when
 * it was the job's last. Used by the workers and by the host alike; returns how many calls this thread ran.
 */
export function takeCalls(ctl: Int32Array, seq: number, run: (index: number) => void): number {
  const tag = seq & 0xffff;
  let ran = 0;
  for (;;) {
    const word = Atomics.load(ctl, NEXT);
    const count = (word >>> 8) & 0xff;
    const index = word & 0xff;
    if (word >>> 16 !== tag || index >= count) return ran;
    if (Atomics.compareExchange(ctl, NEXT, word, word + 1) !== word) continue; // another thread claimed it first
    run(index);
    ran++;
    if (Atomics.add(ctl, DONE, 1) === count - 1) Atomics.notify(ctl, DONE);
  }
}

/**
 * The host's last step: returns once the job's `count` calls are done (DONE = count), those workers claimed included.
 * Polls SPIN_MS first (a worker's call usually ends within microseconds of the host's), then blocks in Atomics.wait
 * where `canBlock`, else polls on (a browser page's main thread). Returns whether blocking still works here.
 */
export function waitForCalls(ctl: Int32Array, count: number, canBlock: boolean): boolean {
  pollWhile(() => Atomics.load(ctl, DONE) !== count, SPIN_MS);
  for (;;) {
    const done = Atomics.load(ctl, DONE);
    if (done === count) return canBlock;
    if (canBlock) {
      try {
        Atomics.wait(ctl, DONE, done, 50);
      } catch {
        canBlock = false;
      }
    }
  }
}

/**
 * A worker's wait for the next job after job `seen`: polls SEQ for SPIN_MS, then blocks in Atomics.wait until it
 * changes. Returns the new sequence number (the pool's stop bumps it too: check STOP).
 */
export function nextJob(ctl: Int32Array, seen: number): number {
  for (;;) {
    let seq = seen;
    pollWhile(() => (seq = Atomics.load(ctl, SEQ)) === seen, SPIN_MS);
    if (seq !== seen) return seq;
    Atomics.wait(ctl, SEQ, seen);
  }
}
