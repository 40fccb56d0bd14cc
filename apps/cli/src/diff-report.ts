// The text `attngraph diff` prints: one row per node with each executor's largest differences against the reference,
// the first disagreement marked, then what the node alone says (a kernel bug, or drift built up upstream).
import type { DiffResult, NodeComparison } from "@attngraph/tools";

const num = (v: number): string =>
  Number.isNaN(v) ? "-" : v === Infinity ? "inf" : v === 0 ? "0" : v.toExponential(2);

function cell(c: NodeComparison): string {
  switch (c.status) {
    case "agree":
      return `${num(c.maxAbs)} ${num(c.maxRel)}`;
    case "disagree":
      return `✗ ${num(c.maxAbs)} ${num(c.maxRel)} (${c.failures}/${c.size})`;
    case "unsupported":
      return `unsupported, ran on ${c.ranOn}`;
    case "failed":
      return "✗ failed";
    case "not-run":
      return "not run";
  }
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

export function formatDiff(r: DiffResult, title: string): string[] {
  const others = r.executors.slice(1);
  const lines = [
    `${title}: ${others.join(", ")} against ${r.reference} · tolerance abs ${r.tolerance.abs}, rel ${r.tolerance.rel}`,
    "",
  ];
  const header = ["node", "kind", ...others.map((e) => `${e}: max abs, max rel`), ""];
  const rows = r.nodes.map((n) => [
    n.node,
    n.kind,
    ...n.against.map(cell),
    r.first?.node === n.node ? "<- first disagreement" : "",
  ]);
  lines.push(...table([header, ...rows]));
  lines.push("");
  for (const n of r.nodes)
    for (const c of n.against) if (c.status === "unsupported") lines.push(`${n.node}: ${c.reason}`);
  if (r.ok && !r.first) {
    lines.push(`${r.nodes.length} node(s) compared: ${others.join(", ")} agree with ${r.reference} within tolerance`);
    return lines;
  }
  const f = r.first;
  if (!f) {
    lines.push("a run failed before reaching any compared node");
    return lines;
  }
  const c = r.nodes.find((n) => n.node === f.node)!.against.find((x) => x.executor === f.executor)!;
  const what =
    c.status === "failed"
      ? `failed: ${c.reason}`
      : `${c.failures} of ${c.size} element(s) out of tolerance${c.worst ? `, worst at ${c.worst.index}: ${c.worst.got} vs ${c.worst.expected}` : ""}${c.reason ? ` (${c.reason})` : ""}`;
  lines.push(`first disagreement: node ${f.node} (op ${f.kind}) on ${f.executor}: ${what}`);
  if (f.alone === "disagrees")
    lines.push(
      `  alone, on ${r.reference}'s values of its inputs, it still disagrees: the ${f.kind} kernel on ${f.executor} is the place to look`,
    );
  if (f.alone === "agrees")
    lines.push(
      `  alone, on ${r.reference}'s values of its inputs, it agrees: the difference built up upstream (each node within tolerance) or inside a fused chain (try --tap all)`,
    );
  return lines;
}
