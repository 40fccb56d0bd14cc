// The benchmark loop: for each shape, one problem; for each implementation, set up, measure, check the output (for a
// training problem: the losses of its first two steps), and for attngraph executors' forwards measure again with
// events$ subscribed and with every node tapped. With --interleave, every
// implementation of a shape is set up first and their runs alternate (the ratios then survive drift).
import { cpus } from "node:os";
import type { BenchOptions } from "./cli.js";
import { diff, diffEach, RELATIVE_TOLERANCE, worstPair, type Diff } from "./compare.js";
import { FLOP_FORMULA, gflops, problemFlops } from "./flops.js";
import type { Impl, Runner, StreamMode } from "./impls/types.js";
import { holdEventLoop } from "./impls/webgpu.js";
import { measure, measureInterleaved, type Measurement, type MeasureOptions } from "./measure.js";
import { isTrainKind, makeBenchProblem, type ProblemKind } from "./problem.js";
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
export async function runBench(
  options: BenchOptions,
  impls: readonly Impl[],
  progress: (line: string) => void,
): Promise<BenchResults> {
  const measureOptions: MeasureOptions = {
    runs: options.runs,
    warmup: options.warmup,
    budgetMs: options.budgetS * 1000,
    minRuns: MIN_RUNS,
  };
  const rows: ResultRow[] = [];
  const streamOverhead: OverheadRow[] = [];
  const checks: OutputCheck[] = [];
  // The WebGPU rows' promises (dawn.node's) settle only while something holds the event loop open (impls/webgpu.ts).
  const release = holdEventLoop();
  try {
    for (const shape of options.shapes) {
      const { shapeRows, overhead, check } = await runShape(
        options.problem,
        shape,
        impls,
        options.threads,
        measureOptions,
        options.interleave,
        progress,
      );
      rows.push(...shapeRows);
      streamOverhead.push(...overhead);
      checks.push(check);
    }
  } finally {
    release();
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
      interleave: options.interleave,
      budgetS: options.budgetS,
      minRuns: MIN_RUNS,
      tolerance: RELATIVE_TOLERANCE,
      flops: FLOP_WORDS[options.problem],
      ...(options.shapeIgnored ? { shapeIgnored: true } : {}),
    },
    rows,
    streamOverhead,
    checks,
  };
}

/** The FLOP count of each problem in words, for the results file. */
const FLOP_WORDS: Readonly<Record<ProblemKind, string>> = {
  attention: `causal: ${FLOP_FORMULA.attention} = 8·b·T·d² (Q, K, V, out projections) + 2·b·T²·d (scores and weighted sum, halved for the mask)`,
  block: `causal: ${FLOP_FORMULA.block} = 24·b·T·d² (qkv_proj 6, out_proj 2, MLP 16) + 2·b·T²·d (scores and weighted sum, halved for the mask)`,
  "train-block": `causal: ${FLOP_FORMULA["train-block"]}: the block forward's matmuls, and two of each size in the backward (input and weight gradients); LayerNorm, GELU, softmax and Adam not counted`,
  "train-copy": `causal: ${FLOP_FORMULA["train-copy"]}: the copy model's forward matmuls (block and output Linear; the embedding is a lookup), and two of each size in the backward; LayerNorm, GELU, softmax, the loss and Adam not counted`,
  flex: FLOP_FORMULA.flex,
  gpt2: FLOP_FORMULA.gpt2,
  decode: `one token: ${FLOP_FORMULA.decode} = 8·b·d² (Q, K, V, out projections of the new token) + 4·b·(T + 1)·d (its scores and weighted sum over T cached positions and itself)`,
};

async function runShape(
  kind: ProblemKind,
  shape: BenchShape,
  impls: readonly Impl[],
  threads: number,
  mo: MeasureOptions,
  interleave: boolean,
  progress: (line: string) => void,
) {
  const problem = makeBenchProblem(kind, shape);
  const flops = problemFlops(kind, shape);
  const base = { problem: kind, b: shape.b, t: shape.t, d: shape.d, h: shape.h, flops };
  const shapeRows: ResultRow[] = [];
  const overhead: OverheadRow[] = [];
  const outputs = new Map<string, Float32Array>();
  const label = shapeLabel(shape);

  const notRun = (impl: Impl, status: "unavailable" | "failed", e: unknown): ResultRow => {
    progress(`${label} ${impl.name}: ${status}: ${message(e)}`);
    return {
      impl: impl.name,
      family: impl.family,
      ...base,
      threads,
      medianMs: null,
      minMs: null,
      runs: 0,
      samplesMs: [],
      warmupRuns: 0,
      budgetLimited: false,
      gflops: null,
      status,
      reason: message(e),
    };
  };
  // A training problem's check compares the losses of each runner's first two steps (Runner.checked), each loss
  // relative to itself (diffEach): the second (after the first update) can be far larger than the first.
  const compare: (out: Float32Array, ref: Float32Array) => Diff = isTrainKind(kind) ? diffEach : diff;
  const setup = async (impl: Impl): Promise<Runner | undefined> => {
    const unsupported = impl.unsupported?.(kind);
    if (unsupported !== undefined) {
      shapeRows.push(notRun(impl, "unavailable", unsupported));
      return undefined;
    }
    try {
      return await impl.setup(problem, { threads });
    } catch (e) {
      // A peer that does not load is a row, not a crash; an attngraph executor that does not set up is a failure.
      shapeRows.push(notRun(impl, impl.family === "peer" ? "unavailable" : "failed", e));
      return undefined;
    }
  };
  const row = async (impl: Impl, runner: Runner, m: Measurement, last: Float32Array): Promise<ResultRow> => {
    const checked = runner.checked ? await runner.checked() : undefined;
    outputs.set(impl.name, Float32Array.from(checked ?? last));
    const software = runner.gpu?.software;
    progress(
      `${label} ${impl.name}: ${software ? `ran ${m.samplesMs.length} times, correctness only (${software}: its times are not GPU figures)` : `${m.medianMs.toFixed(3)} ms (median of ${m.samplesMs.length})`}`,
    );
    return {
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
      ...(checked ? { losses: [...checked] } : {}),
      ...(runner.gpu ? { adapter: runner.gpu.name } : {}),
      ...(software ? { correctnessOnly: software } : {}),
    };
  };
  /** The stream-overhead rows of an attngraph runner; a failure there replaces its row. */
  const streamsOf = async (impl: Impl, runner: Runner, mainMs: number): Promise<void> => {
    if (!runner.streams) return;
    try {
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
      const cheap = mainMs * modes.length < mo.budgetMs / 4;
      const ms = await measureInterleaved(variants, { ...mo, warmup: cheap ? mo.warmup : 0 });
      const none = ms[0]!.medianMs;
      const mainOut = outputs.get(impl.name)!;
      modes.forEach((mode, i) => {
        const s = ms[i]!;
        const d = diff(lastOf.get(mode)!, mainOut);
        progress(
          `${label} ${impl.name} stream overhead, ${mode}: ${runner.gpu?.software ? `ran ${s.samplesMs.length} times, correctness only` : `${s.medianMs.toFixed(3)} ms (median of ${s.samplesMs.length})`}`,
        );
        overhead.push({
          impl: impl.name,
          ...base,
          threads: runner.threads,
          mode,
          medianMs: s.medianMs,
          runs: s.samplesMs.length,
          overheadPct: ((s.medianMs - none) / none) * 100,
          maxAbsDiff: d.maxAbsDiff,
          outputOk: d.ok,
          ...(runner.gpu?.software ? { correctnessOnly: runner.gpu.software } : {}),
        });
      });
    } catch (e) {
      failed(impl, e);
    }
  };
  const failed = (impl: Impl, e: unknown) => {
    const i = shapeRows.findIndex((r) => r.impl === impl.name);
    if (i >= 0) shapeRows.splice(i, 1);
    outputs.delete(impl.name);
    shapeRows.push(notRun(impl, "failed", e));
  };

  if (!interleave) {
    // One implementation at a time: set up, time, observe, dispose (only one holds memory at a time).
    for (const impl of impls) {
      const runner = await setup(impl);
      if (runner === undefined) continue;
      try {
        let last: Float32Array | undefined;
        const m = await measure(async () => void (last = await runner.run()), mo);
        shapeRows.push(await row(impl, runner, m, last!));
        await streamsOf(impl, runner, m.medianMs);
      } catch (e) {
        failed(impl, e);
      } finally {
        await runner.dispose().catch(() => undefined);
      }
    }
  } else {
    // Every implementation set up first, then timed in rounds of one run each (measureInterleaved), so drift on a
    // shared machine lands on all of them alike and the ratios between rows hold even when the medians move. A run
    // that fails takes its implementation out; the others are timed again without it.
    const ready: { impl: Impl; runner: Runner }[] = [];
    for (const impl of impls) {
      const runner = await setup(impl);
      if (runner !== undefined) ready.push({ impl, runner });
    }
    try {
      let timing = ready;
      for (;;) {
        const last = new Map<string, Float32Array>();
        const broken = new Map<string, unknown>();
        const variants = timing.map(({ impl, runner }) => ({
          run: async () => {
            if (broken.has(impl.name)) return;
            try {
              last.set(impl.name, await runner.run());
            } catch (e) {
              broken.set(impl.name, e);
            }
          },
        }));
        // With threads, each timed run follows an untimed one of its own (MeasureOptions.prime): its workers awake.
        const ms = await measureInterleaved(variants, { ...mo, prime: threads > 1 });
        if (broken.size === 0) {
          for (const [i, { impl, runner }] of timing.entries()) {
            try {
              shapeRows.push(await row(impl, runner, ms[i]!, last.get(impl.name)!));
            } catch (e) {
              failed(impl, e); // a training runner whose check steps fail
            }
          }
          break;
        }
        for (const [name, e] of broken) failed(timing.find((r) => r.impl.name === name)!.impl, e);
        timing = timing.filter(({ impl }) => !broken.has(impl.name));
        if (timing.length === 0) break;
      }
      for (const { impl, runner } of timing) {
        const main = shapeRows.find((r) => r.impl === impl.name);
        if (main?.medianMs != null) await streamsOf(impl, runner, main.medianMs);
      }
    } finally {
      for (const { runner } of ready) await runner.dispose().catch(() => undefined);
    }
  }

  // The table lists the implementations in the order asked for, whatever order they finished or failed in.
  const order = (r: ResultRow) => impls.findIndex((i) => i.name === r.impl);
  shapeRows.sort((a, b) => order(a) - order(b));

  // Every output against every other: a row is a mismatch when it disagrees (beyond the tolerance, either way round)
  // with more than half of the others, so one wrong implementation is marked alone even when it is the reference.
  // The max |Δ| reported is against the reference: the first implementation that produced an output.
  const names = [...outputs.keys()];
  const disagreements = new Map(
    names.map(
      (n) =>
        [
          n,
          names.filter(
            (m) =>
              m !== n &&
              !(compare(outputs.get(n)!, outputs.get(m)!).ok && compare(outputs.get(m)!, outputs.get(n)!).ok),
          ),
        ] as const,
    ),
  );
  const [reference, refOut] = [...outputs][0] ?? [];
  const worst = worstPair(outputs, compare);
  const check: OutputCheck = {
    b: shape.b,
    t: shape.t,
    d: shape.d,
    h: shape.h,
    reference: reference ?? null,
    compared: names,
    worstPair: worst
      ? { a: worst.a, b: worst.b, maxAbsDiff: worst.diff.maxAbsDiff, relDiff: worst.diff.relDiff }
      : null,
  };
  return {
    check,
    shapeRows: shapeRows.map((r): ResultRow => {
      const out = outputs.get(r.impl);
      if (!out || !refOut || !reference) return r;
      const d = compare(out, refOut);
      const disagreesWith = disagreements.get(r.impl)!;
      const mismatch = disagreesWith.length * 2 > names.length - 1;
      return {
        ...r,
        reference,
        maxAbsDiff: d.maxAbsDiff,
        relDiff: d.relDiff,
        disagreesWith,
        status: mismatch ? "mismatch" : "ok",
      };
    }),
    overhead,
  };
}
