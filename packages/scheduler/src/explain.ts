import { formatDims } from "@attngraph/graph";
import type { Plan } from "./plan.js";

/** The plan as text: one row per step with its op, executor, layout and shape, then placements that need a word. */
export function explain(plan: Plan): string {
  const rows = plan.steps.map((s, i) => [
    String(i + 1),
    s.node,
    s.kind,
    s.placement.executor,
    s.layout,
    formatDims(s.shape),
    s.inputs.filter((v) => v !== undefined).join(", "),
  ]);
  const header = ["#", "node", "op", "executor", "layout", "shape", "inputs"];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ").trimEnd();
  const used = [...new Set(plan.steps.map((s) => s.placement.executor))];
  const out = [
    `plan: ${plan.steps.length} steps on ${used.join(", ") || "no executor"} (executors in preference order: ${[...plan.executors.keys()].join(", ")})`,
    ...plan.inputs.map((v) => `input   ${v.name} ${formatDims(v.shape)}`),
    ...plan.weights.map((v) => `weight  ${v.name} ${formatDims(v.shape)}`),
    "",
    line(header),
    ...rows.map(line),
    "",
    `outputs: ${plan.outputs.join(", ")}`,
  ];
  const views = plan.steps.filter((s) => s.layout === "view").length;
  const copies = plan.steps.filter((s) => s.layout === "copy");
  out.push(`layout: ${views} view step(s) without a copy${copies.length ? `; copies at ${copies.map((s) => `${s.node} (${s.layoutNote})`).join(", ")}` : ""}`);
  const notable = plan.steps.filter((s) => s.placement.how === "fallback" || s.placement.how === "override");
  for (const s of notable) {
    out.push(
      s.placement.how === "override"
        ? `placement: ${s.node} → ${s.placement.executor} (placed by the user)`
        : `placement: ${s.node} → ${s.placement.executor} (${s.placement.skipped.join("; ")})`,
    );
  }
  return out.join("\n");
}
