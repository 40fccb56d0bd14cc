import { formatDims } from "@attngraph/graph";
import type { BufferPlan } from "./buffers.js";
import type { Plan } from "./plan.js";

/**
 * The plan as text: the passes and what each changed, one row per step with its op, executor, layout and shape, then
 * placements that need a word. With a buffer plan (shapes known), the planned peak against the unplanned sum.
 */
export function explain(plan: Plan, memory?: BufferPlan): string {
  const rows = plan.steps.map((s, i) => [
    String(i + 1),
    s.node,
    s.fused ? `${s.kind} (fused)` : s.kind,
    s.placement.executor,
    s.layout,
    formatDims(s.shape),
    s.inputs.filter((v) => v !== undefined).join(", "),
  ]);
  const header = ["#", "node", "op", "executor", "layout", "shape", "inputs"];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join("  ")
      .trimEnd();
  const used = [...new Set(plan.steps.map((s) => s.placement.executor))];
  const out = [
    `plan: ${plan.steps.length} steps on ${used.join(", ") || "no executor"} (executors in preference order: ${[...plan.executors.keys()].join(", ")})`,
    ...used.flatMap((name) => {
      const line = plan.executors.get(name)?.describe?.();
      return line === undefined ? [] : [`executor ${name}: ${line}`];
    }),
    ...plan.inputs.map((v) => `input   ${v.name} ${formatDims(v.shape)}`),
    ...plan.weights.map((v) => `weight  ${v.name} ${formatDims(v.shape)}`),
    ...(plan.watched.size > plan.patched.size
      ? [`watched ${[...plan.watched].filter((n) => !plan.patched.has(n)).join(", ")}`]
      : []),
    ...(plan.patched.size ? [`patched ${[...plan.patched].join(", ")}`] : []),
    "",
    line(header),
    ...rows.map(line),
    "",
    `outputs: ${plan.outputs.join(", ")}`,
    ...(plan.kept.size ? [`kept after the run (not in an arena): ${[...plan.kept].join(", ")}`] : []),
    ...plan.passes.map((p) => `pass ${p.pass}: ${p.summary}`),
  ];
  for (const s of plan.steps) {
    if (s.placement.how === "override") out.push(`placement: ${s.node} → ${s.placement.executor} (placed by the user)`);
    if (s.placement.how === "fallback")
      out.push(`placement: ${s.node} → ${s.placement.executor} (${s.placement.skipped.join("; ")})`);
  }
  if (memory) {
    const pct = memory.unplannedBytes ? ((100 * memory.peakBytes) / memory.unplannedBytes).toFixed(1) : "0";
    out.push(
      `memory: ${bytes(memory.peakBytes)} planned peak (arena) vs ${bytes(memory.unplannedBytes)} for all intermediates unplanned (${pct}%)`,
    );
  }
  return out.join("\n");
}

function bytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}
