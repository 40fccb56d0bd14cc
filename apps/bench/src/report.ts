// The printed report: one table per shape (ms, GFLOP/s, output check, planned memory, time ratio to each peer), the
// event-stream overhead of the attngraph executors, and the notes that say how to read them.
import { FLOP_FORMULA } from "./flops.js";
import { COPY_VOCAB, isTrainKind, type ProblemKind } from "./problem.js";
import type { BenchResults, OutputCheck, OverheadRow, ResultRow } from "./results.js";

/** The report's first line, per `--problem`. */
export const PROBLEM_TITLE = {
  attention: "causal multi-head attention forward with out_proj (bias), float32",
  block:
    "pre-norm transformer block forward (LayerNorm, causal MHA with fused qkv_proj, residual, LayerNorm, GELU MLP 4·d, residual), float32",
  "train-block":
    "one training step of the pre-norm transformer block (forward, backward, Adam lr 1e-3 on all parameters) on L = sum(output ⊙ gradOutput), gradOutput fixed and seeded, float32",
  "train-copy":
    "one training step of the worked example's copy-task model (embedding + pos_embed, pre-norm block, output Linear; mean cross-entropy, targets = tokens; Adam lr 1e-3), float32",
  decode:
    "one decoding step of causal multi-head attention with out_proj (bias): one new token over a KV cache of T positions, float32",
  flex: "attention variants as score and mask modifications (src/flex/report.ts prints this problem)",
  gpt2: "GPT-2 small: prompts, single tokens and generation (src/gpt2/report.ts prints this problem)",
} as const satisfies Record<ProblemKind, string>;

/** Pads cells into columns: the first `leftCols` left-aligned, the rest right-aligned; a row of one cell spans. */
export function alignTable(rows: readonly (readonly string[])[], leftCols = 1): string {
  const widths: number[] = [];
  for (const r of rows) if (r.length > 1) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((r) =>
      r.length === 1
        ? r[0]!
        : r
            .map((c, i) => (i < leftCols ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
            .join("  ")
            .trimEnd(),
    )
    .join("\n");
}

/** Milliseconds with about four significant digits. */
export function fmtMs(ms: number): string {
  return ms >= 1000 ? ms.toFixed(0) : ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

/** A time ratio: "0.043", "1.00", "12.3", "1234". */
export function fmtRatio(r: number): string {
  return r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r >= 0.1 ? r.toFixed(2) : r.toPrecision(2);
}

export function fmtGflops(g: number): string {
  return g >= 10 ? g.toFixed(1) : g >= 0.1 ? g.toFixed(2) : g.toPrecision(2);
}

/** A FLOP count with a unit: "7.30 kFLOP", "1.01 GFLOP". */
export function fmtFlops(flops: number): string {
  const [div, unit] =
    flops >= 1e9 ? [1e9, "GFLOP"] : flops >= 1e6 ? [1e6, "MFLOP"] : flops >= 1e3 ? [1e3, "kFLOP"] : [1, "FLOP"];
  return `${(flops / div).toPrecision(3)} ${unit}`;
}

/** A difference in exponent form ("3.0e-7"); "0" for exact agreement. */
export function fmtDiff(x: number): string {
  return x === 0 ? "0" : Number.isFinite(x) ? x.toExponential(1) : String(x);
}

/** Peak planned bytes in MiB, or "n/a" when the plan does not expose them (never made up). */
export function fmtBytes(bytes: number | null | undefined): string {
  return typeof bytes === "number" ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : "n/a";
}

const shapeKey = (r: { b: number; t: number; d: number; h: number }) => `${r.b},${r.t},${r.d},${r.h}`;

/** A loss for the table: five significant digits. */
export function fmtLoss(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(5))) : String(x);
}

function shapeTable(
  rows: readonly ResultRow[],
  check: OutputCheck | undefined,
  peers: readonly string[],
  wanted: number,
  meta: BenchResults["meta"],
): string {
  const r0 = rows[0]!;
  const ref = check?.reference ?? null;
  const training = isTrainKind(meta.problem);
  const peerMs = new Map(
    rows
      .filter((r) => r.status !== "unavailable" && r.status !== "failed" && r.medianMs !== null && !r.correctnessOnly)
      .map((r) => [r.impl, r.medianMs!] as const),
  );
  const header = [
    "impl",
    "threads",
    "runs",
    "median ms",
    "GFLOP/s",
    ...(training ? ["losses, steps 1 and 2"] : []),
    `max|Δ| vs ${ref ?? "ref"}`,
    "check",
    "peak planned",
    ...peers.map((p) => `t/${p}`),
  ];
  const body = rows.map((r): string[] => {
    if (r.medianMs === null) return [`${r.impl.padEnd(10)}  ${r.status}: ${r.reason ?? ""}`];
    const checkCell =
      r.status === "mismatch" ? "MISMATCH" : r.impl === ref ? "ref" : r.maxAbsDiff === undefined ? "—" : "ok";
    // A software adapter's row (SwiftShader): its output is checked, its times are not GPU figures and are left out.
    const timed = !r.correctnessOnly;
    const remarks = [
      ...(r.correctnessOnly ? [`correctness only: ${r.correctnessOnly}`] : []),
      ...(r.note ? [r.note] : []),
    ];
    return [
      r.impl + (remarks.length ? ` (${remarks.join("; ")})` : ""),
      String(r.threads),
      `${r.runs}${r.runs < wanted ? "*" : ""}`,
      timed ? fmtMs(r.medianMs) : "—",
      timed ? fmtGflops(r.gflops!) : "—",
      ...(training ? [r.losses ? r.losses.map(fmtLoss).join(", ") : "—"] : []),
      r.impl === ref ? "—" : r.maxAbsDiff === undefined ? "—" : fmtDiff(r.maxAbsDiff),
      checkCell,
      r.family === "attngraph" ? fmtBytes(r.plannedPeakBytes) : "—",
      ...peers.map((p) => (timed && peerMs.has(p) ? fmtRatio(r.medianMs! / peerMs.get(p)!) : "—")),
    ];
  });
  const fixed =
    meta.problem === "train-copy"
      ? ` (fixed: the worked example's copy task, vocab ${COPY_VOCAB}${meta.shapeIgnored ? "; --shape ignored" : ""})`
      : meta.problem === "decode"
        ? ` (T cached positions + 1 new token)`
        : "";
  const per = training ? "step" : meta.problem === "decode" ? "token" : "forward";
  const lines = [
    `shape b=${r0.b} T=${r0.t} d=${r0.d} heads=${r0.h}${fixed} (${fmtFlops(r0.flops)} per ${per})`,
    alignTable([header, ...body]),
  ];
  if (check?.worstPair) {
    const w = check.worstPair;
    lines.push(
      `${training ? "losses of the first two steps" : "outputs"} compared: ${check.compared.join(", ")}; largest difference ${w.a} vs ${w.b}: max|Δ| ${fmtDiff(w.maxAbsDiff)} (relative ${fmtDiff(w.relDiff)})`,
    );
  }
  return lines.join("\n");
}

function overheadTable(rows: readonly OverheadRow[]): string {
  const byKey = new Map<string, Map<string, OverheadRow>>();
  for (const r of rows) {
    const k = `${r.impl}\u0000${shapeKey(r)}`;
    if (!byKey.has(k)) byKey.set(k, new Map());
    byKey.get(k)!.set(r.mode, r);
  }
  const cell = (r: OverheadRow | undefined) =>
    r === undefined
      ? "—"
      : r.correctnessOnly // a software adapter: the output is checked, the times are not figures
        ? `— (${r.runs})${r.outputOk ? "" : " MISMATCH"}`
        : `${fmtMs(r.medianMs)} (${r.runs})${r.mode === "none" ? "" : ` ${r.overheadPct >= 0 ? "+" : ""}${r.overheadPct.toFixed(1)}%`}${r.outputOk ? "" : " MISMATCH"}`;
  const header = ["impl", "shape", "no subscriber", "events$ subscribed", "every node tapped"];
  const body = [...byKey.values()].map((m) => {
    const any = [...m.values()][0]!;
    return [any.impl, shapeKey(any), cell(m.get("none")), cell(m.get("events$")), cell(m.get("tap-all"))];
  });
  return alignTable([header, ...body], 2);
}

/**
 * The WebGPU adapters the rows ran on, one line each with its rows: a real GPU named (the WebGPU rows' times are its
 * figures), or a software adapter (SwiftShader), whose rows are correctness only.
 */
export function adapterLines(rows: readonly ResultRow[]): string[] {
  const byAdapter = new Map<string, { impls: Set<string>; software: string | undefined }>();
  for (const r of rows) {
    if (r.adapter === undefined) continue;
    const a = byAdapter.get(r.adapter) ?? { impls: new Set<string>(), software: r.correctnessOnly };
    a.impls.add(r.impl);
    byAdapter.set(r.adapter, a);
  }
  return [...byAdapter].map(([name, { impls, software }]) =>
    software
      ? `WebGPU adapter: ${name} (${software}): ${[...impls].join(", ")} ${impls.size > 1 ? "are" : "is"} correctness only: outputs checked, times left out (not GPU figures)`
      : `WebGPU adapter: ${name} (GPU of ${[...impls].join(", ")})`,
  );
}

/** The whole printed report. */
export function formatReport(results: BenchResults): string {
  const { meta } = results;
  // Ratio columns: the peers with a time that is a figure (not a software adapter's).
  const peers = [
    ...new Set(
      results.rows.filter((r) => r.family === "peer" && r.medianMs !== null && !r.correctnessOnly).map((r) => r.impl),
    ),
  ];
  const out = [
    `attngraph bench: ${PROBLEM_TITLE[meta.problem]}`,
    `${meta.cpu}, ${meta.cores} cores, Node ${meta.node}; threads ${meta.threads}`,
    `median of ${meta.runs} timed runs after up to ${meta.warmup} warm-up runs; a row stops early once its runs pass ${meta.budgetS} s (never before ${meta.minRuns})` +
      (meta.interleave ? "; the rows of a shape timed in alternating rounds (--interleave)" : ""),
    `GFLOP/s from the causal FLOP count ${FLOP_FORMULA[meta.problem]}; t/<peer> = this row's median time ÷ that peer's (> 1: slower)`,
  ];
  out.push(...adapterLines(results.rows));
  if (isTrainKind(meta.problem)) {
    out.push(
      "one timed run = one step (forward, backward, Adam; the loss read back), from the weights the runs before it left; the check compares each row's losses of its first two steps " +
        "(from the same initial weights: the forward, then the backward and update), each relative to itself; peak planned = the training step's arena (activations kept for the backward included; parameters and Adam state not)",
    );
  }
  if (meta.problem === "decode") {
    out.push(
      "one timed run = one new token [b, 1, d] over a cache of T positions, its output [b, 1, d] read back; attngraph: decoder.truncate(T), then decoder.step({ x: token }) (the cache filled with the prompt once, untimed); " +
        "onnxruntime: the model with inputs x, past_key and past_value [b, H, T, D] (the prompt's keys and values, computed once on the host), Concat of past and new on the sequence axis",
    );
  }
  const shapes = [...new Set(results.rows.map(shapeKey))];
  for (const s of shapes) {
    const rows = results.rows.filter((r) => shapeKey(r) === s);
    out.push(
      "",
      shapeTable(
        rows,
        results.checks.find((c) => shapeKey(c) === s),
        peers,
        meta.runs,
        meta,
      ),
    );
  }
  if (results.streamOverhead.length) {
    out.push(
      "",
      "event-stream overhead of attngraph executors: median ms (runs), change against no subscriber",
      overheadTable(results.streamOverhead),
    );
  }
  const notes: string[] = [];
  if (results.rows.some((r) => r.medianMs !== null && r.runs < meta.runs)) {
    notes.push(`* fewer than ${meta.runs} timed runs: the row's runs took longer than its ${meta.budgetS} s budget`);
  }
  const bad = results.rows.filter((r) => r.status === "mismatch");
  if (bad.length) {
    notes.push(
      `MISMATCH: an output that differs by more than ${meta.tolerance} relative from more than half of the others`,
    );
    for (const r of bad)
      notes.push(`  ${r.impl} at ${shapeKey(r)}: differs from ${(r.disagreesWith ?? []).join(", ")}`);
  }
  const changed = results.streamOverhead.filter((o) => !o.outputOk);
  if (changed.length) {
    notes.push(
      `MISMATCH: observing the run changed its output: ${changed.map((o) => `${o.impl} at ${shapeKey(o)} with ${o.mode} (max|Δ| ${fmtDiff(o.maxAbsDiff)})`).join(", ")}`,
    );
  }
  const failed = results.rows.filter((r) => r.status === "failed" && r.family === "attngraph");
  if (failed.length) notes.push(`FAILED: ${failed.map((r) => `${r.impl} at ${shapeKey(r)}`).join(", ")}`);
  if (notes.length) out.push("", ...notes);
  return out.join("\n");
}

/**
 * The exit status a set of results calls for: 1 on a mismatch (between implementations, or a run whose output changes
 * when observed) or a failed attngraph executor, else 0.
 */
export function exitStatus(results: BenchResults): number {
  const bad = results.rows.some((r) => r.status === "mismatch" || (r.status === "failed" && r.family === "attngraph"));
  return bad || results.streamOverhead.some((o) => !o.outputOk) ? 1 : 0;
}
