// A decode graph's caches in an exported model. In a decode session a cache is state: a weight [B, Hkv, M, D]
// preallocated to M positions that its kv-append node writes in place. An ONNX model has no state, so the export
// turns each cache into the pair onnxruntime users decode with: the cache weight's name becomes a model input holding
// the past positions [B, Hkv, P, D], and the kv-append node (its name, e.g. `k.cache`) becomes a model output holding
// the present ones [B, Hkv, P + L, D] (past, then this call's keys or values), which the caller feeds back as the next
// call's past. The model has no ring: it keeps every position, a window's mask hides the old ones, and the first new
// token's absolute position (RoPE's offset N) is P.
import type { KvAppendAttrs, OpGraph, SymShape, ValueDecl } from "@attngraph/graph";
import { OnnxExportError } from "./errors.js";
import { checkGraph } from "./export-args.js";
import { liveNodes } from "./live-nodes.js";

export interface DecodeCache {
  /** The kv-append node writing it: the model's output of present positions. */
  readonly node: string;
  /** The model's input of past positions: the cache's shape with P positions. */
  readonly pastShape: SymShape;
}

/** Cache weight name → its kv-append node and past shape, for every kv-append node in `live` (those exported). */
export function decodeCaches(graph: OpGraph, live: ReadonlySet<string>): Map<string, DecodeCache> {
  const caches = new Map<string, DecodeCache>();
  for (const n of graph.nodes) {
    if (n.kind !== "kv-append" || !live.has(n.name)) continue;
    const cache = n.inputs["cache"]!;
    if (graph.roleOf(cache) !== "weight") {
      throw new OnnxExportError(
        n.name,
        "kv-append: the cache must be a weight (a decode graph's state), which the model takes as its past input",
        "a weight [B, Hkv, M, D]",
        `${graph.roleOf(cache)} ${cache}`,
      );
    }
    const other = caches.get(cache);
    if (other)
      throw new OnnxExportError(
        n.name,
        `kv-append: cache ${cache} is also written by ${other.node}; each cache needs its own past input`,
        "one kv-append node per cache",
        `${other.node} and ${n.name}`,
      );
    const { past, shift } = n.attrs as unknown as KvAppendAttrs;
    // A shift bound per call is a window's ring, which the model does not have (it keeps every position): exported as
    // 0. A fixed shift would drop positions on every call.
    if (typeof shift === "number" && shift !== 0)
      throw new OnnxExportError(
        n.name,
        "kv-append: a fixed shift has no ONNX form (the model keeps every position)",
        "shift 0 or a dim bound per call",
        String(shift),
      );
    const shape = graph.shapeOf(cache);
    caches.set(cache, { node: n.name, pastShape: [shape[0]!, shape[1]!, past, shape[3]!] });
  }
  return caches;
}

/**
 * The weights an exported model holds, what `exportOnnx`'s `weights` must give: the graph's weights but the decode
 * caches its outputs write (those become past inputs). For callers drawing or loading weights before an export.
 */
export function modelWeights(graph: OpGraph): ValueDecl[] {
  checkGraph("modelWeights graph", graph);
  const caches = decodeCaches(graph, liveNodes(graph, graph.outputs));
  return graph.weights.filter((w) => !caches.has(w.name));
}
