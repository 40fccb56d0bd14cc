// The printed report of `--problem gpt2`: one table per phase (a row per length and implementation: median, tokens
// per second, the cold first run, setup, resident memory, the check, and the time against each peer's), then the
// generations: time to the first token and to the last, from nothing compiled.
import { alignTable, fmtBytes, fmtDiff, fmtMs, fmtRatio } from "../report.js";
import type { Gpt2Results } from "./run.js";
import type { Gpt2Row } from "./types.js";

const PHASE_TITLE = {
  prefill: "prefill: the prompt's T tokens from an empty cache → the last position's logits",
  decode: "decode: one token after T cached positions → its logits",
} as const;

export function formatGpt2Report(results: Gpt2Results): string {
  const { meta, rows, generation } = results;
  const s = meta.sizes;
  const out = [
    `attngraph bench: GPT-2 (${(meta.parameters / 1e6).toFixed(1)}M parameters: ${s.layers} layers, n_embd ${s.embd}, ${s.heads} heads, vocabulary ${s.vocab}, tied head), float32, batch 1`,
    `${meta.cpu}, ${meta.cores} cores, Node ${meta.node}; threads ${meta.threads}${meta.interleave ? "; interleaved" : ""}`,
    `median of ${meta.runs} timed runs after up to ${meta.warmup} warm-up runs; a row stops early once its runs pass ${meta.budgetS} s (never before ${meta.minRuns})`,
    "logits compared across implementations; t/<peer> = this row's median ÷ that peer's (> 1: slower); first run: the cold run after setup; resident: RSS added by setup and first run",
  ];
  const peers = [...new Set(rows.filter((r) => r.family === "peer" && r.medianMs !== null).map((r) => r.impl))];
  for (const phase of ["prefill", "decode"] as const) {
    const group = rows.filter((r) => r.phase === phase);
    if (group.length === 0) continue;
    const header = [
      "T",
      "impl",
      "threads",
      "runs",
      "median ms",
      "tokens/s",
      "first run ms",
      "setup ms",
      "resident",
      "max|Δ| vs ref",
      "check",
      ...peers.map((p) => `t/${p}`),
    ];
    const body = group.map((r): string[] => {
      if (r.medianMs === null) return [`${String(r.t).padEnd(5)}  ${r.impl.padEnd(8)}  ${r.status}: ${r.reason ?? ""}`];
      const peerMs = (p: string) => group.find((x) => x.t === r.t && x.impl === p)?.medianMs ?? null;
      return [
        String(r.t),
        r.impl + (r.note ? ` (${r.note})` : ""),
        String(r.threads),
        `${r.runs}${r.runs < meta.runs ? "*" : ""}`,
        fmtMs(r.medianMs),
        r.tokensPerS === null ? "—" : r.tokensPerS.toFixed(r.tokensPerS >= 100 ? 0 : 1),
        r.firstRunMs === null ? "—" : fmtMs(r.firstRunMs),
        r.setupMs === null ? "—" : fmtMs(r.setupMs),
        r.residentBytes === null ? "—" : fmtBytes(r.residentBytes),
        r.reference === undefined || r.impl === r.reference ? "—" : fmtDiff(r.maxAbsDiff!),
        checkWord(r),
        ...peers.map((p) => {
          const ms = peerMs(p);
          return ms === null ? "—" : fmtRatio(r.medianMs! / ms);
        }),
      ];
    });
    out.push("", PHASE_TITLE[phase], alignTable([header, ...body], 2));
  }
  if (generation.length) {
    const g0 = generation[0]!;
    out.push(
      "",
      `generation: ${g0.count} greedy tokens after a prompt of ${g0.promptLength}, from the weights in memory (attngraph: loadModel → generate; onnxruntime: InferenceSession.create → run, presents fed back); median of the repeats`,
      alignTable(
        [
          [
            "impl",
            "threads",
            "repeats",
            "first token ms",
            `token ${g0.count} ms`,
            "tokens/s after the first",
            "tokens",
          ],
          ...generation.map((g) =>
            g.medianFirstTokenMs === null || g.medianLastTokenMs === null
              ? [`${g.impl.padEnd(8)}  ${g.status}: ${g.reason ?? ""}`]
              : [
                  g.impl,
                  String(g.threads),
                  String(g.firstTokenMs.length),
                  fmtMs(g.medianFirstTokenMs),
                  fmtMs(g.medianLastTokenMs),
                  (((g.count - 1) * 1000) / (g.medianLastTokenMs - g.medianFirstTokenMs)).toFixed(1),
                  g.status === "differs" ? "DIFFER from the first row's" : "same",
                ],
          ),
        ],
        1,
      ),
    );
  }
  const notes: string[] = [];
  if (rows.some((r) => r.medianMs !== null && r.runs < meta.runs))
    notes.push(`* fewer than ${meta.runs} timed runs: the row's runs took longer than its ${meta.budgetS} s budget`);
  const bad = rows.filter((r) => r.status === "mismatch");
  if (bad.length) {
    notes.push(
      `MISMATCH: logits that differ by more than ${meta.tolerance} relative from more than half of the others`,
    );
    for (const r of bad)
      notes.push(`  ${r.impl} ${r.phase} T=${r.t}: differs from ${(r.disagreesWith ?? []).join(", ")}`);
  }
  const failed = rows.filter((r) => r.status === "failed" && r.family === "attngraph");
  if (failed.length) notes.push(`FAILED: ${failed.map((r) => `${r.impl} ${r.phase} T=${r.t}`).join(", ")}`);
  if (notes.length) out.push("", ...notes);
  return out.join("\n");
}

function checkWord(r: Gpt2Row): string {
  if (r.status === "mismatch") return "MISMATCH";
  if (r.reference === undefined) return "—";
  return r.impl === r.reference ? "ref" : "ok";
}

/**
 * 1 on a logits mismatch or a failed attngraph row or generation, else 0. Generated tokens that differ are reported,
 * not failed: greedy decoding of random weights can flip at a near-tie within float32 rounding.
 */
export function gpt2ExitStatus(results: Gpt2Results): number {
  const failedRow = results.rows.some(
    (r) => r.status === "mismatch" || (r.status === "failed" && r.family === "attngraph"),
  );
  const failedGen = results.generation.some((g) => g.status === "failed");
  return failedRow || failedGen ? 1 : 0;
}
