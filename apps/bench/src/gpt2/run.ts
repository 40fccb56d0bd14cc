// The loop of `--problem gpt2`: the model drawn once; each implementation set up once (its setup time, and the
// resident memory it added by the end of its first run, recorded), then every case timed on it (measure.ts, as the
// other problems; with --interleave every implementation is set up first and the cases' runs alternate between them);
// each case's logits compared across implementations (compare.ts, the majority rule). Then, per implementation, a
// greedy generation from nothing compiled, a few times: the time to the first token and to the last.
import { cpus } from "node:os";
import type { BenchOptions } from "../cli.js";
import { agreementOf, RELATIVE_TOLERANCE } from "../compare.js";
import { measure, measureInterleaved, median, type Measurement, type MeasureOptions } from "../measure.js";
import { MIN_RUNS } from "../run.js";
import { GPT2_SMALL, gpt2Parameters, makeGpt2Problem, type Gpt2Problem, type Gpt2Sizes } from "./problem.js";
import type { Gpt2Case, Gpt2GenerationRow, Gpt2Impl, Gpt2Row, Gpt2Runner } from "./types.js";

/** The issue's cases: prompts of 128, 512 and 1024 tokens (the context), one token after 128 and after 512. */
export const DEFAULT_GPT2_CASES: readonly Gpt2Case[] = Object.freeze([
  { phase: "prefill", t: 128 },
  { phase: "prefill", t: 512 },
  { phase: "prefill", t: 1024 },
  { phase: "decode", t: 128 },
  { phase: "decode", t: 512 },
]);

/** Generations per implementation (each from nothing compiled); their median is reported. */
export const GENERATION_REPEATS = 3;

export interface Gpt2Selection {
  readonly cases?: readonly Gpt2Case[];
  /** Tokens to generate (0: no generation rows); default 16. */
  readonly generate?: number;
  /** The prompt a generation starts from; default 128 (fewer when the model has too few positions for it). */
  readonly promptLength?: number;
  /** Model sizes (the tests' small model); default GPT-2 small. */
  readonly sizes?: Gpt2Sizes;
}

export interface Gpt2Results {
  readonly meta: {
    readonly date: string;
    readonly problem: "gpt2";
    readonly node: string;
    readonly cpu: string;
    readonly cores: number;
    readonly threads: number;
    readonly runs: number;
    readonly warmup: number;
    readonly interleave: boolean;
    readonly budgetS: number;
    readonly minRuns: number;
    readonly tolerance: number;
    readonly sizes: Gpt2Sizes;
    readonly parameters: number;
  };
  readonly rows: readonly Gpt2Row[];
  readonly generation: readonly Gpt2GenerationRow[];
}

function message(e: unknown): string {
  const text = e instanceof Error ? `${e.name === "Error" ? "" : `${e.name}: `}${e.message}` : String(e);
  return text.split("\n")[0]!.slice(0, 200);
}

const runCase = (r: Gpt2Runner, c: Gpt2Case) => (c.phase === "prefill" ? r.prefill(c.t) : r.decode(c.t));

/** One implementation set up, with what its setup cost. */
interface Ready {
  readonly impl: Gpt2Impl;
  readonly runner: Gpt2Runner;
  readonly setupMs: number;
  firstRunMs?: number;
  residentBytes?: number;
  readonly rssBefore: number;
}

export async function runGpt2Bench(
  options: BenchOptions,
  impls: readonly Gpt2Impl[],
  sel: Gpt2Selection,
  progress: (line: string) => void,
): Promise<Gpt2Results> {
  const mo: MeasureOptions = {
    runs: options.runs,
    warmup: options.warmup,
    budgetMs: options.budgetS * 1000,
    minRuns: MIN_RUNS,
  };
  const sizes = sel.sizes ?? GPT2_SMALL;
  const cases = sel.cases ?? DEFAULT_GPT2_CASES;
  progress(`drawing the model: ${(gpt2Parameters(sizes) / 1e6).toFixed(1)}M parameters`);
  const p = makeGpt2Problem(sizes);
  const rows: Gpt2Row[] = [];
  const base = (impl: Gpt2Impl, c: Gpt2Case) => ({
    problem: "gpt2" as const,
    impl: impl.name,
    family: impl.family,
    phase: c.phase,
    b: 1,
    t: c.t,
    d: sizes.embd,
    h: sizes.heads,
  });
  const notRun = (impl: Gpt2Impl, c: Gpt2Case, e: unknown, ready?: Ready): Gpt2Row => {
    const status = impl.family === "peer" && ready === undefined ? "unavailable" : "failed";
    progress(`${c.phase} ${c.t} ${impl.name}: ${status}: ${message(e)}`);
    return {
      ...base(impl, c),
      threads: ready?.runner.threads ?? options.threads,
      medianMs: null,
      minMs: null,
      runs: 0,
      samplesMs: [],
      warmupRuns: 0,
      budgetLimited: false,
      tokensPerS: null,
      firstRunMs: ready?.firstRunMs ?? null,
      setupMs: ready?.setupMs ?? null,
      residentBytes: ready?.residentBytes ?? null,
      status,
      reason: message(e),
    };
  };
  const setup = async (impl: Gpt2Impl): Promise<Ready | Error> => {
    const rssBefore = process.memoryUsage.rss();
    const start = performance.now();
    try {
      const runner = await impl.setup(p, { threads: options.threads });
      const setupMs = performance.now() - start;
      progress(`${impl.name}: set up in ${setupMs.toFixed(0)} ms`);
      return { impl, runner, setupMs, rssBefore };
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  };
  /** Untimed preparation of a case, then (the first time) the cold run, and the resident memory after it. */
  const prepare = async (r: Ready, c: Gpt2Case): Promise<void> => {
    if (c.phase === "decode") await r.runner.preparePast(c.t);
    if (r.firstRunMs === undefined) {
      const start = performance.now();
      await runCase(r.runner, c);
      r.firstRunMs = performance.now() - start;
      r.residentBytes = process.memoryUsage.rss() - r.rssBefore;
    }
  };
  const row = (r: Ready, c: Gpt2Case, m: Measurement): Gpt2Row => {
    progress(`${c.phase} ${c.t} ${r.impl.name}: ${m.medianMs.toFixed(2)} ms (median of ${m.samplesMs.length})`);
    return {
      ...base(r.impl, c),
      threads: r.runner.threads,
      medianMs: m.medianMs,
      minMs: m.minMs,
      runs: m.samplesMs.length,
      samplesMs: m.samplesMs,
      warmupRuns: m.warmupRuns,
      budgetLimited: m.budgetLimited,
      tokensPerS: ((c.phase === "prefill" ? c.t : 1) * 1000) / m.medianMs,
      firstRunMs: r.firstRunMs ?? null,
      setupMs: r.setupMs,
      residentBytes: r.residentBytes ?? null,
      ...(r.impl.family === "attngraph" ? { plannedPeakBytes: planned(r.runner, c) } : {}),
      status: "ok",
      ...(r.runner.note ? { note: r.runner.note } : {}),
    };
  };
  const outputs = new Map<string, Map<string, Float32Array>>(); // case → impl → logits
  const keep = (c: Gpt2Case, impl: Gpt2Impl, out: Float32Array) => {
    const key = `${c.phase} ${c.t}`;
    if (!outputs.has(key)) outputs.set(key, new Map());
    outputs.get(key)!.set(impl.name, Float32Array.from(out));
  };

  if (!options.interleave) {
    for (const impl of impls) {
      const r = await setup(impl);
      if (r instanceof Error) {
        rows.push(...cases.map((c) => notRun(impl, c, r)));
        continue;
      }
      try {
        for (const c of cases) {
          try {
            await prepare(r, c);
            let last: Float32Array | undefined;
            const m = await measure(async () => void (last = await runCase(r.runner, c)), mo);
            keep(c, impl, last!);
            rows.push(row(r, c, m));
          } catch (e) {
            rows.push(notRun(impl, c, e, r));
          }
        }
      } finally {
        await r.runner.dispose().catch(() => undefined);
      }
    }
  } else {
    const ready: Ready[] = [];
    for (const impl of impls) {
      const r = await setup(impl);
      if (r instanceof Error) rows.push(...cases.map((c) => notRun(impl, c, r)));
      else {
        // Its cold run now, before the next one's setup: its first-run time and resident memory are its own.
        await prepare(r, cases[0]!).catch(() => undefined); // a failure shows again on that case's row
        ready.push(r);
      }
    }
    try {
      for (const c of cases) {
        const timing: Ready[] = [];
        for (const r of ready) {
          try {
            await prepare(r, c);
            timing.push(r);
          } catch (e) {
            rows.push(notRun(r.impl, c, e, r));
          }
        }
        const last = new Map<string, Float32Array>();
        const broken = new Map<string, unknown>();
        const ms = await measureInterleaved(
          timing.map((r) => ({
            run: async () => {
              if (broken.has(r.impl.name)) return;
              try {
                last.set(r.impl.name, await runCase(r.runner, c));
              } catch (e) {
                broken.set(r.impl.name, e);
              }
            },
          })),
          { ...mo, prime: options.threads > 1 }, // see MeasureOptions.prime
        );
        timing.forEach((r, i) => {
          if (broken.has(r.impl.name)) return rows.push(notRun(r.impl, c, broken.get(r.impl.name), r));
          keep(c, r.impl, last.get(r.impl.name)!);
          return rows.push(row(r, c, ms[i]!));
        });
      }
    } finally {
      for (const r of ready) await r.runner.dispose().catch(() => undefined);
    }
  }
  const checked = rows.map((r) => checkRow(r, outputs.get(`${r.phase} ${r.t}`)));
  const generation: Gpt2GenerationRow[] = [];
  const count = sel.generate ?? 16;
  if (count > 0)
    for (const impl of impls) generation.push(await generationRow(impl, p, options.threads, sel, count, progress));
  const reference = generation.find((g) => g.status === "ok");
  const cpu = cpus();
  return {
    meta: {
      date: new Date().toISOString(),
      problem: "gpt2",
      node: process.version,
      cpu: cpu[0]?.model.trim() ?? "unknown",
      cores: cpu.length,
      threads: options.threads,
      runs: options.runs,
      warmup: options.warmup,
      interleave: options.interleave,
      budgetS: options.budgetS,
      minRuns: MIN_RUNS,
      tolerance: RELATIVE_TOLERANCE,
      sizes,
      parameters: gpt2Parameters(sizes),
    },
    rows: checked,
    generation: generation.map((g) =>
      reference && g.status === "ok" && g.tokens.join() !== reference.tokens.join() ? { ...g, status: "differs" } : g,
    ),
  };
}

function planned(runner: Gpt2Runner, c: Gpt2Case): number | null {
  try {
    return runner.plannedPeakBytes?.(c) ?? null;
  } catch {
    return null;
  }
}

/** A row's logits against the case's others: max |Δ| against the first; a mismatch when it disagrees with most. */
function checkRow(r: Gpt2Row, outputs: ReadonlyMap<string, Float32Array> | undefined): Gpt2Row {
  const a = outputs && agreementOf(r.impl, outputs);
  return a ? { ...r, ...a } : r;
}

async function generationRow(
  impl: Gpt2Impl,
  p: Gpt2Problem,
  threads: number,
  sel: Gpt2Selection,
  count: number,
  progress: (line: string) => void,
): Promise<Gpt2GenerationRow> {
  // 128 by default; a model with fewer positions (the tests') leaves room for the new tokens.
  const promptLength = sel.promptLength ?? Math.min(128, p.sizes.positions - count);
  const first: number[] = [];
  const lastMs: number[] = [];
  let tokens: readonly number[] = [];
  const row = { impl: impl.name, family: impl.family, threads, promptLength, count };
  try {
    for (let i = 0; i < GENERATION_REPEATS; i++) {
      const g = await impl.generate(p, { threads }, promptLength, count);
      if (g.tokens.length !== count) throw new Error(`generated ${g.tokens.length} tokens, asked for ${count}`);
      first.push(g.atMs[0]!);
      lastMs.push(g.atMs.at(-1)!);
      tokens = g.tokens;
      progress(
        `generate ${impl.name}: first token ${g.atMs[0]!.toFixed(0)} ms, token ${count} ${g.atMs.at(-1)!.toFixed(0)} ms`,
      );
    }
    return {
      ...row,
      firstTokenMs: first,
      lastTokenMs: lastMs,
      medianFirstTokenMs: median(first),
      medianLastTokenMs: median(lastMs),
      tokens,
      status: "ok",
    };
  } catch (e) {
    progress(`generate ${impl.name}: failed: ${message(e)}`);
    return {
      ...row,
      firstTokenMs: first,
      lastTokenMs: lastMs,
      medianFirstTokenMs: null,
      medianLastTokenMs: null,
      tokens,
      status: impl.family === "peer" ? "unavailable" : "failed",
      reason: message(e),
    };
  }
}
