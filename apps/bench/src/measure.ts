// Timing: warm-up, then timed runs until the run count is reached or the row's time budget is spent (never fewer than
// `minRuns`). The median is what we report; the run count goes with it, so a median over 3 runs is visible as such.

export interface MeasureOptions {
  /** Timed runs wanted (the ≥ 10 rule). */
  readonly runs: number;
  /**
   * Warm-up runs wanted (0: none). The first is always done; more, up to this count and beyond it until `warmupMs` have
   * passed (fast rows need many runs before the JIT settles), only while within a quarter of the budget.
   */
  readonly warmup: number;
  /** Fast rows keep warming up until this much time has passed (default 500 ms). */
  readonly warmupMs?: number;
  /** Time budget for the timed runs, ms: once spent, stop as soon as `minRuns` are done. */
  readonly budgetMs: number;
  /** Timed runs done whatever the budget. */
  readonly minRuns: number;
  /**
   * Interleaved rounds only: each timed run right after one untimed run of the same variant (default false; the bench
   * sets it with threads). On the project's 2-core VM a threaded run that follows another variant's, or any idle
   * spell, is slow: its workers wake late and run slowly for a few milliseconds (a 3.9 ms attention forward took
   * 8.5–9.9 ms after 50 ms idle), and onnxruntime-web's workers keep spinning after its own run (about 13 ms of CPU
   * in the next 20 ms), taking a core from whatever runs next. The untimed run absorbs most of both, so each side is
   * timed closer to how it runs back to back, while the rounds still alternate. Not all: see the bench README.
   */
  readonly prime?: boolean;
}

export interface Measurement {
  readonly medianMs: number;
  readonly minMs: number;
  readonly samplesMs: readonly number[];
  readonly warmupRuns: number;
  /** True when the budget cut the timed runs short of `runs`. */
  readonly budgetLimited: boolean;
}

/** One thing to time. `before` runs outside the timed region and returns what undoes it (e.g. subscribe/unsubscribe). */
export interface Variant {
  readonly run: () => Promise<unknown>;
  readonly before?: () => () => void;
}

/** The median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median of an empty list");
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Runs `fn` for warm-up and then timed runs (see MeasureOptions); `now` is injectable for tests. */
export async function measure(
  fn: () => Promise<unknown>,
  options: MeasureOptions,
  now: () => number = () => performance.now(),
): Promise<Measurement> {
  return (await measureInterleaved([{ run: fn }], options, now))[0]!;
}

/**
 * Times several variants of one computation in rounds, one run of each per round (the order rotating from round to
 * round), so that drift on a shared machine (JIT tiers, other work, heat) lands on all of them alike. Warm-up and the
 * budget count rounds; the budget is per variant (n variants get n · budgetMs).
 */
export async function measureInterleaved(
  variants: readonly Variant[],
  options: MeasureOptions,
  now: () => number = () => performance.now(),
): Promise<Measurement[]> {
  const { runs, warmup, budgetMs, minRuns, warmupMs = 500, prime = false } = options;
  const n = variants.length;
  const samples: number[][] = variants.map(() => []);
  const round = async (r: number, record: boolean) => {
    for (let k = 0; k < n; k++) {
      const i = (r + k) % n;
      const v = variants[i]!;
      const undo = v.before?.();
      try {
        if (prime && record && n > 1) await v.run();
        const t0 = now();
        await v.run();
        if (record) samples[i]!.push(now() - t0);
      } finally {
        undo?.();
      }
    }
  };
  let warmupRounds = 0;
  const warmStart = now();
  const warming = () => {
    if (warmup === 0) return false;
    if (warmupRounds === 0) return true;
    const elapsed = now() - warmStart;
    return elapsed < (n * budgetMs) / 4 && (warmupRounds < warmup || elapsed < n * warmupMs);
  };
  while (warming()) await round(warmupRounds++, false);
  let rounds = 0;
  const start = now();
  while (rounds < runs && (rounds < minRuns || now() - start < n * budgetMs)) await round(rounds++, true);
  return samples.map((s) => ({
    medianMs: median(s),
    minMs: Math.min(...s),
    samplesMs: s,
    warmupRuns: warmupRounds,
    budgetLimited: s.length < runs,
  }));
}
