// The arguments of exportOnnx, checked before anything is lowered. Unchecked, `contrib: "bogus"` was taken as "none"
// (a model without the contrib ops asked for, and no word said), `outputs: "weights"` was read letter by letter, a
// numeric graphName failed inside protobuf with a plain Error, and a null graph, weights or options ended in a TypeError
// naming none of them. Each is an OnnxExportError naming the argument or option, what was expected and what came.
import type { OpGraph } from "@attngraph/graph";
import { OnnxExportError } from "./errors.js";

/** The values `contrib` takes (ExportOptions.contrib), in the order a message lists them. */
export const CONTRIB_MODES = ["auto", "none"] as const;

/** What the export uses of its options, defaults filled in. */
export interface ExportArgs {
  readonly contrib: boolean;
  readonly outputs: readonly string[];
  readonly graphName: string;
}

/** A short account of a value for the `got` of a message. */
export function kindOf(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  return `${typeof v} ${String(v)}`;
}

/** `graph` must be an OpGraph: recognised by its methods, not instanceof (a second copy of @attngraph/graph makes them too). */
export function checkGraph(subject: string, graph: unknown): asserts graph is OpGraph {
  const g = graph as Partial<OpGraph> | null;
  if (typeof g?.has !== "function" || !Array.isArray(g.nodes))
    throw new OnnxExportError(subject, "not an op graph", "an OpGraph", kindOf(graph));
}

/** `value` is an object that is not an array (weights, options), else an OnnxExportError about `subject`. */
function checkRecord(value: unknown, subject: string, what: string, expected: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new OnnxExportError(subject, what, expected, kindOf(value));
}

/** Checks exportOnnx's graph, weights (an object; its tensors are checked where the export reads them) and options. */
export function checkExportArgs(graph: unknown, weights: unknown, options: unknown): ExportArgs {
  checkGraph("exportOnnx graph", graph);
  checkRecord(weights, "exportOnnx weights", "weights must be an object of tensors by name", "{ [weight]: Tensor }");
  if (options === undefined) return { contrib: true, outputs: [], graphName: "attngraph" };
  checkRecord(options, "exportOnnx options", "options must be an object", "{ contrib?, outputs?, graphName? }");
  const { contrib = "auto", outputs = [], graphName = "attngraph" } = options as Record<string, unknown>;
  if (!CONTRIB_MODES.includes(contrib as never))
    throw new OnnxExportError(
      "options.contrib",
      "unknown contrib mode",
      CONTRIB_MODES.map((m) => `"${m}"`).join(" or "),
      kindOf(contrib),
    );
  if (!Array.isArray(outputs) || !outputs.every((o) => typeof o === "string"))
    throw new OnnxExportError(
      "options.outputs",
      "extra outputs must be node names",
      "an array of strings",
      Array.isArray(outputs)
        ? `an array holding ${kindOf(outputs.find((o) => typeof o !== "string"))}`
        : kindOf(outputs),
    );
  // ONNX's checker refuses a graph without a name ("Field 'name' of graph is required to be non-empty").
  if (typeof graphName !== "string" || graphName === "")
    throw new OnnxExportError(
      "options.graphName",
      "the ONNX graph's name must be a non-empty string",
      'a string such as "attngraph"',
      kindOf(graphName),
    );
  return { contrib: contrib === "auto", outputs: outputs as string[], graphName };
}
