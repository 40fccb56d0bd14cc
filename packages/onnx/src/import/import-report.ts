// What importOnnx did, for `attngraph import --explain` and ImportedOnnx.explain(): the ONNX ops found, how many
// nodes were folded at import, the patterns recognised, the attention chains, and each attngraph node with the ONNX
// nodes it stands for.
import type { Built, Chain, LowerContext } from "./lower-context.js";
import type { ModelIn } from "./read-model.js";

export class ImportReport {
  /** ONNX op types and their counts, most frequent first. */
  readonly ops: readonly { readonly opType: string; readonly count: number }[];
  readonly folded: number;
  /** Pattern groups found and built, by kind ("attention", "gelu", "layer-norm", "linear", "silu"). */
  readonly patterns: Readonly<Record<string, number>>;
  /** Groups found whose constants did not fit (built node by node instead). */
  readonly patternsDeclined: number;
  readonly chains: readonly Chain[];
  readonly built: readonly Built[];
  readonly opset: number;
  readonly producer: string;

  constructor(model: ModelIn, ctx: LowerContext, found: number) {
    const counts = new Map<string, number>();
    for (const n of model.nodes) {
      const k = n.domain && n.domain !== "ai.onnx" ? `${n.domain}.${n.opType}` : n.opType;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    this.ops = [...counts]
      .map(([opType, count]) => ({ opType, count }))
      .sort((a, b) => b.count - a.count || a.opType.localeCompare(b.opType));
    this.folded = ctx.folded;
    const patterns: Record<string, number> = {};
    for (const k of ctx.patterns) patterns[k] = (patterns[k] ?? 0) + 1;
    this.patterns = patterns;
    this.patternsDeclined = found - ctx.patterns.length;
    this.chains = ctx.chains;
    this.built = ctx.built;
    this.opset = model.opsets.get("") ?? model.opsets.get("ai.onnx") ?? 0;
    this.producer = model.producer;
  }

  format(): string {
    const total = this.ops.reduce((a, o) => a + o.count, 0);
    const lines = [
      `ONNX model (opset ${this.opset}${this.producer ? `, from ${this.producer}` : ""}): ${total} nodes of ${this.ops.length} op types`,
      `  ${this.ops.map((o) => `${o.opType} ×${o.count}`).join(", ")}`,
      `folded at import (shape arithmetic, constants, masks): ${this.folded} nodes`,
      `patterns recognised: ${
        Object.entries(this.patterns)
          .map(([k, n]) => `${k} ×${n}`)
          .join(", ") || "none"
      }${this.patternsDeclined ? ` (${this.patternsDeclined} matched in shape but not in constants, built node by node)` : ""}`,
      `attention chains: ${this.chains.length}`,
      ...this.chains.map(
        (c) => `  ${c.scope || "(top level)"}: ${c.onnx.join(" → ")}  ⇒  ${c.nodes.join(", ")} (mask: ${c.mask})`,
      ),
      `attngraph nodes: ${this.built.length}`,
      ...this.built.map(
        (b) => `  ${b.name} = ${b.kind}  ← ${b.onnx.join(", ") || "(added)"}${b.note ? `  [${b.note}]` : ""}`,
      ),
    ];
    return lines.join("\n");
  }
}
