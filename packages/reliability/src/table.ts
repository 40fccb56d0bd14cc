/** A Markdown table with padded columns, as the soak tables in docs/reliability.md are printed. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(" | ")} |`;
  return [line(head), line(width.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
