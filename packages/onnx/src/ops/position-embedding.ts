import type { PositionEmbeddingAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/**
 * position-embedding: rows offset..offset+T-1 of weight [P, E] as one Slice on axis 0, T the ids' last dim (their
 * shape only: Shape of the ids when T is symbolic). A named offset is read at run time like RoPE's (an exported decode
 * model has N = P, the past input's length); one no graph input carries fails the export naming the node. ONNX's Slice
 * clamps ends past P instead of failing: the graph's shape rule refuses offset + T > P wherever the dims are known.
 */
export const positionEmbedding: OpLowering = (l) => {
  const { offset } = l.node.attrs as unknown as PositionEmbeddingAttrs;
  const weight = l.required("weight");
  const ids = l.shapeOf("ids");
  const t = l.known(ids[ids.length - 1]!);
  const axes = l.constant("int64", [0]);
  if (typeof offset === "number" && t !== undefined) {
    return l.emit("Slice", [weight, l.constant("int64", [offset]), l.constant("int64", [offset + t]), axes]);
  }
  const start = typeof offset === "number" ? l.constant("int64", [offset], []) : l.dimScalar(offset);
  const end = l.emit("Add", [start, l.dimScalar({ of: l.required("ids"), axis: ids.length - 1 })]);
  return l.emit("Slice", [weight, l.emit("Unsqueeze", [start, axes]), l.emit("Unsqueeze", [end, axes]), axes]);
};
