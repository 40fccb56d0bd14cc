import type { OpGraph, GraphNode } from "@attngraph/graph";
import type { Layout } from "./plan.js";

/**
 * Predicts, per value, whether it is dense row-major, so that reshape/transpose/slice are planned as views and a
 * copy is planned only where a view cannot express the new shape (a reshape that merges dims a transpose separated).
 * Kernels read strided inputs, so a strided view is handed to them as is.
 */
export function planLayout(node: GraphNode, graph: OpGraph, contiguous: ReadonlyMap<string, boolean>): { layout: Layout; note: string; contiguous: boolean } {
  const def = graph.registry.get(node.kind, node.name);
  if (!def.view) return { layout: "compute", note: "", contiguous: true };
  const src = Object.values(node.inputs)[0]!;
  const inputDense = contiguous.get(src) ?? true;
  switch (node.kind) {
    case "transpose": {
      const perm = node.attrs.perm as readonly number[];
      const identity = perm.every((p, i) => p === i);
      return { layout: "view", note: identity ? "identity permutation" : "strided view, no copy", contiguous: inputDense && identity };
    }
    case "reshape":
      return inputDense
        ? { layout: "view", note: "view of dense input", contiguous: true }
        : { layout: "copy", note: "input is a strided view: copied unless its strides allow a view", contiguous: true };
    case "slice": {
      const axis = node.attrs.axis as number;
      const shape = graph.shapeOf(src);
      const a = axis < 0 ? axis + shape.length : axis;
      const dense = inputDense && shape.slice(0, a).every((d) => d === 1);
      return { layout: "view", note: "offset view, no copy", contiguous: dense };
    }
    default:
      // A user-declared view op: trust the declaration, assume the result is strided.
      return { layout: "view", note: "declared as a view", contiguous: false };
  }
}
