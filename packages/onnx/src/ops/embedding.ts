import type { OpLowering } from "../lowering.js";

/**
 * embedding: rows of weight [V, E] by int32 id, as Gather on axis 0. onnxruntime rejects an id at or past V as the
 * cpu executor does; a negative id, which attngraph rejects, counts from the end in ONNX's Gather.
 */
export const embedding: OpLowering = (l) => l.emit("Gather", [l.required("weight"), l.required("ids")], { axis: 0 });
