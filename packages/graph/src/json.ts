// The serialized form of a graph. `version` changes whenever the meaning of a field changes; a reader refuses versions
// it does not know rather than guessing. Field order is fixed, so toJSON(fromJSON(x)) is byte-identical for canonical x.
import type { Dim } from "./dims.js";
import { GraphFormatError, show } from "./errors.js";
import { OpGraph, type NodeSpec, type ValueDecl } from "./graph.js";
import { createOpRegistry, type OpRegistry } from "./registry.js";

export const GRAPH_FORMAT = "attngraph.graph";
export const GRAPH_FORMAT_VERSION = 1;

export interface GraphJSON {
  readonly format: typeof GRAPH_FORMAT;
  readonly version: typeof GRAPH_FORMAT_VERSION;
  readonly inputs: readonly { readonly name: string; readonly shape: readonly Dim[] }[];
  readonly weights: readonly { readonly name: string; readonly shape: readonly Dim[] }[];
  readonly nodes: readonly {
    readonly name: string;
    readonly kind: string;
    readonly inputs: Readonly<Record<string, string>>;
    readonly attrs: Readonly<Record<string, unknown>>;
  }[];
  readonly outputs: readonly string[];
}

export function toJSON(graph: OpGraph): GraphJSON {
  return {
    format: GRAPH_FORMAT,
    version: GRAPH_FORMAT_VERSION,
    inputs: graph.inputs.map((v) => ({ name: v.name, shape: [...v.shape] })),
    weights: graph.weights.map((v) => ({ name: v.name, shape: [...v.shape] })),
    nodes: graph.nodes.map((n) => ({ name: n.name, kind: n.kind, inputs: { ...n.inputs }, attrs: { ...n.attrs } })),
    outputs: [...graph.outputs],
  };
}

/** Reads a graph from its JSON form (object or string). Errors name the JSON path of the field at fault. */
export function fromJSON(json: unknown, registry: OpRegistry = createOpRegistry()): OpGraph {
  let doc = json;
  if (typeof json === "string") {
    try {
      doc = JSON.parse(json);
    } catch (e) {
      throw new GraphFormatError("$", "not valid JSON", "a graph document", (e as Error).message);
    }
  }
  const root = obj(doc, "$");
  if (root.format !== GRAPH_FORMAT) throw new GraphFormatError("$.format", "not an attngraph graph", show(GRAPH_FORMAT), show(root.format));
  if (root.version !== GRAPH_FORMAT_VERSION) {
    throw new GraphFormatError("$.version", "unknown format version", String(GRAPH_FORMAT_VERSION), show(root.version));
  }
  const decls = (key: "inputs" | "weights"): ValueDecl[] =>
    arr(root[key], `$.${key}`).map((v, i) => {
      const o = obj(v, `$.${key}[${i}]`);
      return { name: str(o.name, `$.${key}[${i}].name`), shape: dims(o.shape, `$.${key}[${i}].shape`) };
    });
  const nodes: NodeSpec[] = arr(root.nodes, "$.nodes").map((v, i) => {
    const p = `$.nodes[${i}]`;
    const o = obj(v, p);
    const inputs = obj(o.inputs, `${p}.inputs`);
    for (const [slot, src] of Object.entries(inputs)) str(src, `${p}.inputs.${slot}`);
    return { name: str(o.name, `${p}.name`), kind: str(o.kind, `${p}.kind`), inputs: inputs as Record<string, string>, attrs: obj(o.attrs ?? {}, `${p}.attrs`) };
  });
  const outputs = arr(root.outputs, "$.outputs").map((v, i) => str(v, `$.outputs[${i}]`));
  return OpGraph.create(registry, { inputs: decls("inputs"), weights: decls("weights"), nodes, outputs });
}

function obj(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new GraphFormatError(path, "wrong type", "an object", show(v));
  return v as Record<string, unknown>;
}
function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new GraphFormatError(path, "wrong type", "an array", show(v));
  return v;
}
function str(v: unknown, path: string): string {
  if (typeof v !== "string" || v.length === 0) throw new GraphFormatError(path, "wrong type", "a non-empty string", show(v));
  return v;
}
function dims(v: unknown, path: string): Dim[] {
  return arr(v, path).map((d, i) => {
    if ((typeof d === "string" && d.length > 0) || (Number.isSafeInteger(d) && (d as number) >= 0)) return d as Dim;
    throw new GraphFormatError(`${path}[${i}]`, "invalid dim", "a non-negative integer or a dim name", show(d));
  });
}
