// The benchmark loop: for each shape, one problem; for each implementation, set up, measure, check the output, and
// for attngraph executors measure again with events$ subscribed and with every node tapped.
import { cpus } from "node:os";
import type { BenchOptions } from "./cli.js";
import { diff, RELATIVE_TOLERANCE, worstPair } from "./compare.js";
import { FLOP_FORMULA, gflops, problemFlops } from "./flops.js";
import type { Impl, Runner, StreamMode } from "./impls/types.js";
import { measure, measureInterleaved, type MeasureOptions } from "./measure.js";
import { makeBenchProblem, type ProblemKind } from "./problem.js";
import type { BenchResults, OutputCheck, OverheadRow, ResultRow } from "./results.js";
import { shapeLabel, type BenchShape } from "./shapes.js";

/** Timed runs done even when a row's budget is spent. */
export const MIN_RUNS = 3;

const STREAM_MODES: readonly StreamMode[] = ["events$", "tap-all"];

function message(e: unknown): string {
  const text = e instanceof Error ? `${e.name === "Error" ? "" : `${e.name}: `}${e.message}` : String(e);
  return text.split("\n")[0]!.slice(0, 160);
}

/** Runs every implementation on every shape. `progress` gets one line per finished measurement. */
export async function runBench(options: BenchOptions, impls: readonly Impl[], progress: (line: string) => void): Promise<BenchResults> {
  const measureOptions: MeasureOptions = { runs: options.runs, warmup: options.warmup, budgetMs: options.budgetS * 1000, minRuns: MIN_RUNS };
  const rows: ResultRow[] = [];
  const streamOverhead: OverheadRow[] = [];
  const checks: OutputCheck[] = [];
  for (const shape of options.shapes) {
    const { shapeRows, overhead, check } = await runShape(options.problem, shape, impls, options.threads, measureOptions, progress);
    rows.push(...shapeRows);
    streamOverhead.push(...overhead);
    checks.push(check);
  }
  const cpu = cpus();
  return {
    meta: {
      date: new Date().toISOString(),
      problem: options.problem,
      node: process.version,
      cpu: cpu[0]?.model.trim() ?? "unknown",
      cores: cpu.length,
      threads: options.threads,
      runs: options.runs,
      warmup: options.warmup,
      budgetS: options.budgetS,
      minRuns: MIN_RUNS,
      tolerance: RELATIVE_TOLERANCE,
      flops:
        options.problem === "block"
          ? `causal: ${FLOP_FORMULA.block} = 24·b·T·d² (qkv_proj 6, out_proj 2, MLP 16) + 2·b·T²·d (scores and weighted sum, halved for the mask)`
          : `causal: ${FLOP_FORMULA.attention} = 8·b·T·d² (Q, K, V, out projections) + 2·b·T²·d (scores and weighted sum, halved for the mask)`,
    },
    rows,
    streamOverhead,
    checks,
  };
}

async function runShape(kind: ProblemKind, shape: BenchShape, impls: readonly Impl[], threads: number, mo: MeasureOptions, progress: (line: string) => void) {
  const problem = makeBenchProblem(kind, shape);
  const flops = problemFlops(kind, shape);
  const base = { problem: kind, b: shape.b, t: shape.t, d: shape.d, h: shape.h, flops };
  const shapeRows: ResultRow[] = [];
  const overhead: OverheadRow[] = [];
  const outputs = new Map<string, Float32Array>();
  const label = shapeLabel(shape);

  for (const impl of impls) {
    const notRun = (status: "unavailable" | "failed", e: unknown): ResultRow => {
      progress(`${label} ${impl.name}: ${status}: ${message(e)}`);
      return { impl: impl.name, family: impl.family, ...base, threads, medianMs: null, minMs: null, runs: 0, samplesMs: [], warmupRuns: 0, budgetLimited: false, gflops: null, status, reason: message(e) };
    };
    let runner: Runner;
    try {
      runner = await impl.setup(problem, { threads });
    } catch (e) {
      // A peer that does not load is a row, not a crash; an attngraph executor that does not set up is a failure.
      shapeRows.push(notRun(impl.family === "peer" ? "unavailable" : "failed", e));
      continue;
    }
    try {
      let last: Float32Array | undefined;
      const once = async () => {
        last = await runner.run();
      };
      const m = await measure(once, mo);
      outputs.set(impl.name, Float32Array.from(last!));
      progress(`${label} ${impl.name}: ${m.medianMs.toFixed(3)} ms (median of ${m.samplesMs.length})`);
      shapeRows.push({
        impl: impl.name,
        family: impl.family,
        ...base,
        threads: runner.threads,
        medianMs: m.medianMs,
        minMs: m.minMs,
        runs: m.samplesMs.length,
        samplesMs: m.samplesMs,
        warmupRuns: m.warmupRuns,
        budgetLimited: m.budgetLimited,
        gflops: gflops(flops, m.medianMs),
        status: "ok",
        ...(impl.family === "attngraph" ? { plannedPeakBytes: runner.plannedPeakBytes ?? null } : {}),
        ...(runner.note ? { note: runner.note } : {}),
      });
      if (runner.streams) {
        // The three ways of observing a run, interleaved (measureInterleaved) so that drift does not pose as overhead.
        // "none" is measured again here rather than taken from the row above, for the same reason. A warm-up round
        // only when a round is cheap: the session is warm from the row above.
        const streams = runner.streams;
        const modes = ["none", ...STREAM_MODES] as const;
        // Observing a run must not change its result (beyond rounding: a tapped node may not be fused away).
        const lastOf = new Map<string, Float32Array>();
        const variants = modes.map((mode) => ({
          run: async () => void lastOf.set(mode, await runner.run()),
          ...(mode === "none" ? {} : { before: streams[mode] }),
        }));
        const cheap = m.medianMs * modes.length < mo.budgetMs / 4;
        const ms = await measureInterleaved(variants, { ...mo, warmup: cheap ? mo.warmup : 0 });
        const none = ms[0]!.medianMs;
        const mainOut = outputs.get(impl.name)!;
        modes.forEach((mode, i) => {
          const s = ms[i]!;
          const d = diff(lastOf.get(mode)!, mainOut);
          progress(`${label} ${impl.name} stream overhead, ${mode}: ${s.medianMs.toFixed(3)} ms (median of ${s.samplesMs.length})`);
          overhead.push({
            impl: impl.name, ...base, threads: runner.threads, mode, medianMs: s.medianMs, runs: s.samplesMs.length,
            overheadPct: ((s.medianMs - none) / none) * 100, maxAbsDiff: d.maxAbsDiff, outputOk: d.ok,
          });
        });
      }
    } catch (e) {
      const i = shapeRows.findIndex((r) => r.impl === impl.name);
      if (i >= 0) shapeRows.splice(i, 1); // a failure in the stream measurements replaces the row
      outputs.delete(impl.name);
      shapeRows.push(notRun("failed", e));
    } finally {
      await runner.dispose().catch(() => undefined);
    }
  }

  // Every output against every other: a row is a mismatch when it disagrees (beyond the tolerance, either way round)
  // with more than half of the others, so one wrong implementation is marked alone even when it is the reference.
  // The max |Δ| reported is against the reference: the first implementation that produced an output.
  const names = [...outputs.keys()];
  const disagreements = new Map(
    names.map((n) => [n, names.filter((m) => m !== n && !(diff(outputs.get(n)!, outputs.get(m)!).ok && diff(outputs.get(m)!, outputs.get(n)!).ok))] as const),
  );
  const [reference, refOut] = [...outputs][0] ?? [];
  const worst = worstPair(outputs);
  const check: OutputCheck = {
    b: shape.b, t: shape.t, d: shape.d, h: shape.h,
    reference: reference ?? null,
    compared: names,
    worstPair: worst ? { a: worst.a, b: worst.b, maxAbsDiff: worst.diff.maxAbsDiff, relDiff: worst.diff.relDiff } : null,
  };
  return {
    check,
    shapeRows: shapeRows.map((r): ResultRow => {
      const out = outputs.get(r.impl);
      if (!out || !refOut || !reference) return r;
      const d = diff(out, refOut);
      const disagreesWith = disagreements.get(r.impl)!;
      const mismatch = disagreesWith.length * 2 > names.length - 1;
      return { ...r, reference, maxAbsDiff: d.maxAbsDiff, relDiff: d.relDiff, disagreesWith, status: mismatch ? "mismatch" : "ok" };
    }),
    overhead,
  };
}
