// Ops declared by their elementwise expression (silu, relu, a user's definePointwiseOp) become "pointwise" steps that
// carry the expression: executors hold one kernel that evaluates expressions, not one per op. After fusion (which
// matches steps by their op kind) and before placement (which asks executors about the kind they will run).
import type { OpGraph } from "@attngraph/graph";
import type { PassReport } from "../plan.js";
import type { DraftStep } from "./draft.js";

export function lowerPointwise(
  steps: readonly DraftStep[],
  graph: OpGraph,
): { steps: DraftStep[]; report: PassReport } {
  const lowered = new Map<string, number>();
  const out = steps.map((d) => {
    if (d.fused !== undefined || !graph.registry.has(d.kind)) return d;
    const def = graph.registry.get(d.kind, d.node);
    if (!def.pointwise) return d;
    lowered.set(d.kind, (lowered.get(d.kind) ?? 0) + 1);
    return { ...d, kind: "pointwise", attrs: { expr: def.pointwise(d.attrs as never) } };
  });
  const list = [...lowered].map(([kind, n]) => `${kind} ×${n}`).join(", ");
  return {
    steps: out,
    report: { pass: "pointwise", summary: list ? `${list} as pointwise steps (their expressions)` : "none" },
  };
}
