import type { CrossEntropyAttrs } from "@attngraph/graph";
import type { Lowering, OpLowering } from "../lowering.js";

/**
 * cross-entropy: per position logsumexp(logits) − logits[target], the row max subtracted before Exp as in the cpu
 * kernel. A target equal to ignoreIndex gets loss 0 and is not counted (it is replaced by class 0 before the gather, so
 * the gather never reads outside the row); "mean" divides by the count, and a mean over no counted position is 0.
 * logits [..., V], targets [...] int32 → [] or [...].
 */
export const crossEntropy: OpLowering = (l) => {
  const { ignoreIndex, reduction } = l.node.attrs as unknown as CrossEntropyAttrs;
  const logits = l.required("logits");
  const targets = l.required("targets");
  const last = l.constant("int64", [-1]);
  const max = l.emit("ReduceMax", [logits], { axes: [-1], keepdims: 1 }); // [..., 1]; axes is an attribute until opset 18
  const sumExp = l.emit("ReduceSum", [l.emit("Exp", [l.emit("Sub", [logits, max])]), last], { keepdims: 0 }); // [...]
  const lse = l.emit("Add", [l.emit("Log", [sumExp]), l.emit("Squeeze", [max, last])]);
  const ignored = ignoreIndex === null ? undefined : l.emit("Equal", [targets, l.constant("int32", [ignoreIndex], [])]);
  const safe = ignored === undefined ? targets : l.emit("Where", [ignored, l.constant("int32", [0], []), targets]);
  const picked = l.emit("Squeeze", [
    l.emit("GatherElements", [logits, l.emit("Unsqueeze", [safe, last])], { axis: -1 }),
    last,
  ]);
  const diff = l.emit("Sub", [lse, picked]);
  const losses = ignored === undefined ? diff : l.emit("Where", [ignored, l.constant("float", [0], []), diff]);
  if (reduction === "none") return losses;
  if (reduction === "sum") return total(l, losses);
  if (ignored === undefined) return l.emit("ReduceMean", [losses], { keepdims: 0 });
  const counted = total(l, l.emit("Cast", [l.emit("Not", [ignored])], { to: 1 }));
  return l.emit("Div", [total(l, losses), l.emit("Max", [counted, l.constant("float", [1], [])])]);
};

/** The sum of every element, a scalar (ReduceSum with no axes reduces them all). */
function total(l: Lowering, x: string): string {
  return l.emit("ReduceSum", [x], { keepdims: 0 });
}
