// exportOnnx: an OpGraph and its weights as an ONNX ModelProto. Graph inputs become ONNX inputs (symbolic dims as
// dim_param), weights become initializers under their own names, every node is lowered by its op's lowering
// (ops/index.ts) into ONNX nodes whose result carries the node's name, and graph outputs become ONNX outputs.
// A decode graph's caches (the weights its kv-append nodes write) become past/present pairs instead (decode-caches.ts).
import { builtinOps, DECODE_DIMS, formatDims, type OpGraph, type SymShape } from "@attngraph/graph";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { decodeCaches, type DecodeCache } from "./decode-caches.js";
import { OnnxExportError } from "./errors.js";
import { checkExportArgs, kindOf } from "./export-args.js";
import { liveNodes } from "./live-nodes.js";
import { lowerNode } from "./lower-node.js";
import { CONTRIB_DOMAIN, ModelWriter } from "./model-writer.js";
import { DataType, encodeModel, floatTensor, int32Tensor, valueInfo, type ValueInfoMsg } from "./proto/proto.js";
import type { ExportReport, NodeExport } from "./report.js";
import { RuntimeShapes } from "./runtime-shapes.js";

export interface ExportOptions {
  /**
   * "auto" (default): onnxruntime's com.microsoft contrib ops where they compute the node exactly as one fused kernel
   * (Gelu, FastGelu, BiasGelu, SkipLayerNormalization), plain opset-17 ops elsewhere, chosen node by node. "none":
   * plain ops only, for runtimes other than onnxruntime. Any other value is an OnnxExportError.
   */
  readonly contrib?: "auto" | "none";
  /** More nodes to expose as ONNX outputs beside the graph's outputs (what a tap reads in a session). */
  readonly outputs?: readonly string[];
  /** The ONNX graph's name, non-empty; default "attngraph". */
  readonly graphName?: string;
}

/** The default-domain opset every export imports. */
export const ONNX_OPSET = 17;
/** The com.microsoft opset imported when a contrib op is written. */
export const CONTRIB_OPSET = 1;

/**
 * The model's bytes (a ModelProto). Throws OnnxExportError naming the node that has no ONNX form, the weight that is
 * missing or does not fit, or the argument or option that is not what it should be.
 */
export function exportOnnx(
  graph: OpGraph,
  weights: Readonly<Record<string, AnyTensor>>,
  options: ExportOptions = {},
): Uint8Array {
  return exportOnnxWithReport(graph, weights, options).model;
}

/** The model's bytes and what became of each node (see formatExportReport). */
export function exportOnnxWithReport(
  graph: OpGraph,
  weights: Readonly<Record<string, AnyTensor>>,
  options: ExportOptions = {},
): { model: Uint8Array; report: ExportReport } {
  const args = checkExportArgs(graph, weights, options);
  const requested = [...new Set([...graph.outputs, ...args.outputs])];
  for (const o of requested)
    if (!graph.has(o) || graph.roleOf(o) !== "node")
      throw new OnnxExportError(`outputs: ${o}`, "an exported output must be a node of the graph", "a node name", o);
  const live = liveNodes(graph, requested);
  // The caches of the kv-append nodes the outputs read (a dead one is not exported, like any dead node).
  const caches = decodeCaches(graph, live);
  const bound = bindWeights(graph, weights, caches);
  // A decode graph's model also outputs every cache's present value (its kv-append node), to be fed back as the past.
  const outputs = [...new Set([...requested, ...[...caches.values()].map((c) => c.node)])];
  const writer = new ModelWriter([...graph.inputs, ...graph.weights, ...graph.nodes].map((v) => v.name));
  const pastInputs = [...caches].map(([name, c]) => ({ name, shape: c.pastShape }));
  const shapes = new RuntimeShapes(writer, [...graph.inputs, ...pastInputs], bound);
  // The model keeps every position (present = past ++ new, no ring), so the first new token's absolute position N,
  // RoPE's offset, is the past length P.
  if (caches.size > 0) shapes.alias(DECODE_DIMS.position, DECODE_DIMS.past);
  for (const w of graph.weights) if (!caches.has(w.name)) writer.addInitializer(initializer(w.name, weights[w.name]!));
  const builtin = new Set(builtinOps.map((op) => op.kind));
  const reports: NodeExport[] = [];
  for (const n of graph.nodes) {
    if (!live.has(n.name)) continue;
    reports.push(lowerNode(n, { graph, writer, shapes, builtin, contrib: args.contrib }));
  }
  const opsetImports = [
    { domain: "", version: ONNX_OPSET },
    ...(writer.domains.has(CONTRIB_DOMAIN) ? [{ domain: CONTRIB_DOMAIN, version: CONTRIB_OPSET }] : []),
  ];
  const info = (name: string, shape: SymShape): ValueInfoMsg =>
    valueInfo(
      name,
      graph.dtypeOf(name) === "int32" ? DataType.INT32 : DataType.FLOAT,
      shape.map((d) => (typeof d === "string" ? (bound.get(d) ?? d) : d)),
    );
  const model = encodeModel({
    graphName: args.graphName,
    nodes: writer.nodes,
    initializers: writer.initializers,
    inputs: [...graph.inputs, ...pastInputs].map((v) => info(v.name, v.shape)),
    outputs: outputs.map((o) => info(o, graph.shapeOf(o))),
    opsetImports,
  });
  return { model, report: { opsetImports, nodes: reports } };
}

/**
 * Checks that every weight the graph declares is given with a matching dtype and shape, and binds symbolic dims of
 * weight declarations to the given sizes (they become constants in the model). A decode cache is not a weight of the
 * model (it becomes an input), so it is neither needed nor read, and its dims (B among them) stay symbolic.
 */
function bindWeights(
  graph: OpGraph,
  weights: Readonly<Record<string, AnyTensor>>,
  caches: ReadonlyMap<string, DecodeCache>,
): Map<string, number> {
  const bound = new Map<string, number>();
  for (const w of graph.weights) {
    if (caches.has(w.name)) continue;
    // Own keys only: a weight named "constructor" is missing from {}, not Object's constructor.
    const t: unknown = Object.hasOwn(weights, w.name) ? weights[w.name] : undefined;
    if (t === undefined)
      throw new OnnxExportError(
        w.name,
        "weight missing: an exported model holds every weight as an initializer",
        `a tensor ${formatDims(w.shape)}`,
        "nothing",
      );
    if (!Tensor.isTensor(t))
      throw new OnnxExportError(w.name, "weight is not a tensor", `a Tensor ${formatDims(w.shape)}`, kindOf(t));
    const dtype = w.dtype ?? "float32";
    if (t.dtype !== dtype) throw new OnnxExportError(w.name, "weight has the wrong dtype", dtype, t.dtype);
    const fits =
      t.rank === w.shape.length &&
      w.shape.every((d, i) => (typeof d === "number" ? d === t.shape[i] : (bound.get(d) ?? t.shape[i]) === t.shape[i]));
    if (!fits)
      throw new OnnxExportError(
        w.name,
        "weight shape does not match its declaration",
        formatDims(w.shape),
        formatDims(t.shape),
      );
    w.shape.forEach((d, i) => typeof d === "string" && bound.set(d, t.shape[i]!));
  }
  return bound;
}

function initializer(name: string, t: AnyTensor): ReturnType<typeof floatTensor> {
  return t.dtype === "int32"
    ? int32Tensor(name, t.shape, t.toInt32Array())
    : floatTensor(name, t.shape, t.toFloat32Array());
}
