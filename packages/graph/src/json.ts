// The serialized form of a graph. `version` changes whenever the meaning of a field changes (a field added, removed or
// read differently); a reader refuses versions it does not know rather than guessing, and refuses fields it does not
// know, so a misspelt "attr" is an error instead of a node silently built with default attributes. Field order is
// fixed, so toJSON(fromJSON(x)) is byte-identical for canonical x.
import { AttnGraphError, clip, type DType } from "@attngraph/tensor";
import type { Dim } from "./dims.js";
import { GraphFormatError, show } from "./errors.js";
import { OpGraph, type NodeSpec, type ValueDecl } from "./graph.js";
import { createOpRegistry, type OpRegistry } from "./registry.js";

export const GRAPH_FORMAT = "attngraph.graph";
/**
 * Version 2 added `dtype` on inputs and weights (absent = float32). A graph is written in the lowest version that can
 * express it (1 unless it has an int32 input or weight), so documents older readers understand stay as they were;
 * both are read.
 */
export const GRAPH_FORMAT_VERSION = 2;
const READABLE_VERSIONS: readonly number[] = [1, 2];

export interface GraphJSON {
  readonly format: typeof GRAPH_FORMAT;
  readonly version: 1 | typeof GRAPH_FORMAT_VERSION;
  readonly inputs: readonly { readonly name: string; readonly shape: readonly Dim[]; readonly dtype?: DType }[];
  readonly weights: readonly { readonly name: string; readonly shape: readonly Dim[]; readonly dtype?: DType }[];
  readonly nodes: readonly {
    readonly name: string;
    readonly kind: string;
    readonly inputs: Readonly<Record<string, string>>;
    readonly attrs: Readonly<Record<string, unknown>>;
  }[];
  readonly outputs: readonly string[];
}

/** The graph as plain data (fresh objects: changing them never changes the graph). */
export function toJSON(graph: OpGraph): GraphJSON {
  return {
    format: GRAPH_FORMAT,
    version: [...graph.inputs, ...graph.weights].some((v) => v.dtype !== undefined && v.dtype !== "float32")
      ? GRAPH_FORMAT_VERSION
      : 1,
    inputs: graph.inputs.map(declJSON),
    weights: graph.weights.map(declJSON),
    nodes: graph.nodes.map((n) => ({
      name: n.name,
      kind: n.kind,
      inputs: { ...n.inputs },
      attrs: Object.fromEntries(Object.entries(n.attrs).map(([k, v]) => [k, Array.isArray(v) ? [...v] : v])),
    })),
    outputs: [...graph.outputs],
  };
}

function declJSON(v: ValueDecl): GraphJSON["inputs"][number] {
  return v.dtype && v.dtype !== "float32"
    ? { name: v.name, shape: [...v.shape], dtype: v.dtype }
    : { name: v.name, shape: [...v.shape] };
}

/**
 * Reads a graph from its JSON form (object or string). A document that does not follow the format is a
 * GraphFormatError naming the JSON path of the field at fault (`$.nodes[2].kind`); a well-formed graph that is wrong
 * as a graph (a cycle, a bad shape) is a GraphValidationError naming the node. Nothing else escapes.
 */
export function fromJSON(json: unknown, registry: OpRegistry = createOpRegistry()): OpGraph {
  try {
    return read(json, registry);
  } catch (e) {
    if (AttnGraphError.isInstance(e)) throw e;
    // Whatever slipped past the checks (a stack overflow on pathological input, say) still names the document.
    throw new GraphFormatError(
      "$",
      "could not read the graph",
      "a graph document",
      e instanceof Error ? `${e.name}: ${e.message}` : show(e),
      e,
    );
  }
}

function read(json: unknown, registry: OpRegistry): OpGraph {
  let doc = json;
  if (typeof json === "string") {
    try {
      doc = JSON.parse(json);
    } catch (e) {
      throw new GraphFormatError("$", "not valid JSON", "a graph document", clip((e as Error).message));
    }
  }
  const root = obj(doc, "$", ["format", "version", "inputs", "weights", "nodes", "outputs"]);
  if (root.format !== GRAPH_FORMAT)
    throw new GraphFormatError("$.format", "not an attngraph graph", show(GRAPH_FORMAT), show(root.format));
  if (!READABLE_VERSIONS.includes(root.version as number)) {
    throw new GraphFormatError(
      "$.version",
      "unknown format version",
      READABLE_VERSIONS.join(" or "),
      show(root.version),
    );
  }
  const fields = root.version === 1 ? ["name", "shape"] : ["name", "shape", "dtype"];
  const decls = (key: "inputs" | "weights"): ValueDecl[] =>
    arr(root[key], `$.${key}`).map((v, i) => {
      const p = `$.${key}[${i}]`;
      const o = obj(v, p, fields);
      const decl = { name: str(o.name, `${p}.name`), shape: dims(o.shape, `${p}.shape`) };
      if (o.dtype === undefined) return decl;
      if (o.dtype !== "float32" && o.dtype !== "int32")
        throw new GraphFormatError(`${p}.dtype`, "unknown dtype", "float32 or int32", show(o.dtype));
      return { ...decl, dtype: o.dtype };
    });
  const inputs = decls("inputs");
  const weights = decls("weights");
  const nodes: NodeSpec[] = arr(root.nodes, "$.nodes").map((v, i) => {
    const p = `$.nodes[${i}]`;
    const o = obj(v, p, ["name", "kind", "inputs", "attrs"]);
    const name = str(o.name, `${p}.name`);
    const kind = str(o.kind, `${p}.kind`);
    const slots = obj(o.inputs, `${p}.inputs`);
    for (const [slot, src] of Object.entries(slots)) str(src, `${p}.inputs.${slot}`);
    return { name, kind, inputs: slots as Record<string, string>, attrs: obj(o.attrs ?? {}, `${p}.attrs`) };
  });
  const outputs = arr(root.outputs, "$.outputs").map((v, i) => str(v, `$.outputs[${i}]`));
  return OpGraph.create(registry, { inputs, weights, nodes, outputs });
}

/** An object; with `keys`, one with no other fields. */
function obj(v: unknown, path: string, keys?: readonly string[]): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new GraphFormatError(path, "wrong type", "an object", show(v));
  const o = v as Record<string, unknown>;
  if (keys) {
    for (const k of Object.keys(o)) {
      if (!keys.includes(k))
        throw new GraphFormatError(`${path}.${k}`, "unknown field", `one of ${keys.join(", ")}`, show(k));
    }
  }
  return o;
}
function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new GraphFormatError(path, "wrong type", "an array", show(v));
  return v;
}
function str(v: unknown, path: string): string {
  if (typeof v !== "string" || v.length === 0)
    throw new GraphFormatError(path, "wrong type", "a non-empty string", show(v));
  return v;
}
function dims(v: unknown, path: string): Dim[] {
  return arr(v, path).map((d, i) => {
    if ((typeof d === "string" && d.length > 0) || (Number.isSafeInteger(d) && (d as number) >= 0)) return d as Dim;
    throw new GraphFormatError(`${path}[${i}]`, "invalid dim", "a non-negative integer or a dim name", show(d));
  });
}
