// What an export did with each node: which ONNX ops it became, whether an onnxruntime contrib op was used, and why
// not where one could have been. `attngraph export` prints it; tests check the choice per node.

export interface NodeExport {
  readonly node: string;
  readonly kind: string;
  /** The ONNX ops written for the node, in order: "MatMul", "com.microsoft.SkipLayerNormalization", … */
  readonly onnxOps: readonly string[];
  /** True when at least one of them is a com.microsoft contrib op. */
  readonly contrib: boolean;
  /** Why the node stayed plain although contrib ops were allowed (attributes or shapes the contrib op cannot express). */
  readonly plainBecause?: string;
}

export interface ExportReport {
  /** The opsets the model imports: always "" (ONNX) 17, plus "com.microsoft" 1 when a contrib op was written. */
  readonly opsetImports: readonly { readonly domain: string; readonly version: number }[];
  readonly nodes: readonly NodeExport[];
}

/** One line per node: `mlp.gelu (gelu) → com.microsoft.Gelu`, with the reason where a node stayed plain. */
export function formatExportReport(report: ExportReport): string {
  const lines = report.nodes.map((n) => {
    const ops = n.onnxOps.length ? n.onnxOps.join(", ") : "(none: the value is its input)";
    return `${n.node} (${n.kind}) → ${ops}${n.plainBecause ? `  [plain: ${n.plainBecause}]` : ""}`;
  });
  const opsets = report.opsetImports.map((o) => `${o.domain || "ai.onnx"} ${o.version}`).join(", ");
  return [...lines, `opsets: ${opsets}`].join("\n");
}
