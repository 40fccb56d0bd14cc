// The printed report of `--problem flex`: one table per shape and part, a line per variant and implementation, with
// the planned peak of attngraph's rows and each row's time against each peer's on the same variant.
import { alignTable, fmtBytes, fmtDiff, fmtMs, fmtRatio } from "../report.js";
import type { FlexResults } from "./run.js";
import type { FlexRow } from "./types.js";

const PART_TITLE = {
  layer: "layer: x [b, T, d] → Q, K, V projections → variant → out_proj (bias)",
  core: "core: q, k, v [b, H, T, D] → variant → [b, H, T, D]",
} as const;

export function formatFlexReport(results: FlexResults): string {
  const { meta, rows } = results;
  const out = [
    `attngraph bench: flex variants (issue 27), float32; window ${meta.window}, softcap ${meta.softcap}; every variant causal`,
    `${meta.cpu}, ${meta.cores} cores, Node ${meta.node}; threads ${meta.threads}`,
    `median of ${meta.runs} timed runs after up to ${meta.warmup} warm-up runs; a row stops early once its runs pass ${meta.budgetS} s (never before ${meta.minRuns})`,
    "outputs of a variant compared across implementations; t/<peer> = this row's median ÷ that peer's on the same variant (> 1: slower)",
  ];
  const key = (r: FlexRow) => `${r.b},${r.t},${r.d},${r.h} ${r.part}`;
  const peers = [...new Set(rows.filter((r) => r.family === "peer" && r.medianMs !== null).map((r) => r.impl))];
  for (const k of [...new Set(rows.map(key))]) {
    const group = rows.filter((r) => key(r) === k);
    const r0 = group[0]!;
    const header = [
      "variant",
      "impl",
      "threads",
      "runs",
      "median ms",
      "max|Δ| vs ref",
      "check",
      "peak planned",
      ...peers.map((p) => `t/${p}`),
    ];
    const body = group.map((r): string[] => {
      if (r.medianMs === null) return [`${r.variant.padEnd(14)}  ${r.impl.padEnd(8)}  ${r.status}: ${r.reason ?? ""}`];
      const peerMs = (p: string) => group.find((x) => x.variant === r.variant && x.impl === p)?.medianMs ?? null;
      return [
        r.variant,
        r.impl + (r.note ? ` (${r.note})` : ""),
        String(r.threads),
        `${r.runs}${r.runs < meta.runs ? "*" : ""}`,
        fmtMs(r.medianMs),
        r.reference === undefined || r.impl === r.reference ? "—" : fmtDiff(r.maxAbsDiff!),
        r.status === "mismatch" ? "MISMATCH" : r.reference === undefined ? "—" : r.impl === r.reference ? "ref" : "ok",
        r.family === "attngraph" ? fmtBytes(r.plannedPeakBytes) : "—",
        ...peers.map((p) => {
          const ms = peerMs(p);
          return ms === null ? "—" : fmtRatio(r.medianMs! / ms);
        }),
      ];
    });
    out.push(
      "",
      `shape b=${r0.b} T=${r0.t} d=${r0.d} heads=${r0.h}, ${PART_TITLE[r0.part]}`,
      alignTable([header, ...body], 2),
    );
  }
  const notes: string[] = [];
  if (rows.some((r) => r.medianMs !== null && r.runs < meta.runs))
    notes.push(`* fewer than ${meta.runs} timed runs: the row's runs took longer than its ${meta.budgetS} s budget`);
  const bad = rows.filter((r) => r.status === "mismatch");
  if (bad.length) {
    notes.push(
      `MISMATCH: an output that differs by more than ${meta.tolerance} relative from more than half of the others`,
    );
    for (const r of bad)
      notes.push(`  ${r.impl} ${r.part} ${r.variant} at T=${r.t}: differs from ${(r.disagreesWith ?? []).join(", ")}`);
  }
  const failed = rows.filter((r) => r.status === "failed" && r.family === "attngraph");
  if (failed.length)
    notes.push(`FAILED: ${failed.map((r) => `${r.impl} ${r.part} ${r.variant} at T=${r.t}`).join(", ")}`);
  if (notes.length) out.push("", ...notes);
  return out.join("\n");
}

/** 1 on a mismatch or a failed attngraph row (a row out of memory is unavailable, not failed), else 0. */
export function flexExitStatus(results: FlexResults): number {
  return results.rows.some((r) => r.status === "mismatch" || (r.status === "failed" && r.family === "attngraph"))
    ? 1
    : 0;
}
