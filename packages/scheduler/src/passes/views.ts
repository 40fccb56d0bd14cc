import type { OpGraph } from "@attngraph/graph";
import type { Layout, PassReport } from "../plan.js";
import type { DraftStep } from "./draft.js";

export interface StepLayout {
  readonly layout: Layout;
  readonly note: string;
}

/**
 * View elision. Predicts, per value, whether it is dense row-major, so that reshape/transpose/slice are planned as
 * views and a copy is planned only where a view cannot express the new shape (a reshape that merges dims a transpose
 * separated). Kernels read strided inputs, so a strided view is handed to them as is.
 */
export function planViews(
  steps: readonly DraftStep[],
  graph: OpGraph,
): { layouts: Map<string, StepLayout>; report: PassReport } {
  const dense = new Map<string, boolean>();
  const layouts = new Map<string, StepLayout>();
  // A fused step may make a value the graph does not have (add-layer-norm's [sum | norm]): its shape is the step's.
  const stepShapes = new Map(steps.map((s) => [s.node, s.shape] as const));
  const shapeOf = (v: string) => stepShapes.get(v) ?? graph.shapeOf(v);
  for (const s of steps) {
    const view = s.fused === undefined && graph.registry.get(s.kind, s.node).view === true;
    const r = view
      ? viewLayout(s, shapeOf, dense.get(s.inputs[0]!) ?? true)
      : { layout: "compute" as const, note: "", contiguous: true };
    dense.set(s.node, r.contiguous);
    layouts.set(s.node, { layout: r.layout, note: r.note });
  }
  const views = [...layouts.values()].filter((l) => l.layout === "view").length;
  const copies = [...layouts].filter(([, l]) => l.layout === "copy").map(([n, l]) => `${n} (${l.note})`);
  return {
    layouts,
    report: {
      pass: "views",
      summary: `${views} view step(s) without a copy${copies.length ? `; copies at ${copies.join(", ")}` : ""}`,
    },
  };
}

function viewLayout(
  s: DraftStep,
  shapeOf: (value: string) => OpGraph["nodes"][number]["shape"],
  inputDense: boolean,
): { layout: Layout; note: string; contiguous: boolean } {
  switch (s.kind) {
    case "transpose": {
      const perm = s.attrs.perm as readonly number[];
      const identity = perm.every((p, i) => p === i);
      return {
        layout: "view",
        note: identity ? "identity permutation" : "strided view, no copy",
        contiguous: inputDense && identity,
      };
    }
    case "reshape":
      return inputDense
        ? { layout: "view", note: "view of dense input", contiguous: true }
        : { layout: "copy", note: "input is a strided view: copied unless its strides allow a view", contiguous: true };
    case "slice": {
      const shape = shapeOf(s.inputs[0]!);
      const axis = s.attrs.axis as number;
      const a = axis < 0 ? axis + shape.length : axis;
      return {
        layout: "view",
        note: "offset view, no copy",
        contiguous: inputDense && shape.slice(0, a).every((d) => d === 1),
      };
    }
    default:
      // A user-declared view op: trust the declaration, assume the result is strided.
      return { layout: "view", note: "declared as a view", contiguous: false };
  }
}
