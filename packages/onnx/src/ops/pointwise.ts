// An elementwise expression (a "pointwise" node, or an op declared by its expression such as silu) as plain ONNX
// elementwise nodes: the expression lowering of the attention modifications, each element read being the input's value
// itself (ONNX broadcasts the literals).
import { elementsRead, POINTWISE_SLOTS, pointwiseExprOf, type Expr } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { lowerExpr } from "./expr.js";

/** The lowering of expression `expr` reading the elements of `names` (the node's input slots, in order). */
export function pointwiseLowering(expr: Expr, names: readonly string[]): OpLowering {
  return (l) => {
    const elements = new Map<string, string>();
    names.forEach((slot, k) => {
      const v = l.input(slot);
      if (v !== undefined) elements.set(POINTWISE_SLOTS[k]!, v);
    });
    const first = l.required(names[0]!);
    const value = lowerExpr({ l, x: first, inputs: [], elements }, expr);
    // An expression that reads no element is a constant: it still has the node's shape.
    return elementsRead(expr).length > 0 ? value.name : l.emit("Expand", [value.name, l.emit("Shape", [first])]);
  };
}

/** The generic pointwise op: its `expr` attribute over x0…x3. */
export const pointwise: OpLowering = (l) => {
  const present = POINTWISE_SLOTS.filter((s) => l.input(s) !== undefined);
  return pointwiseLowering(pointwiseExprOf(l.node.attrs["expr"], `${l.node.name}.expr`, present), POINTWISE_SLOTS)(l);
};
