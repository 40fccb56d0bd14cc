import { MultiDirectedGraph } from "graphology";
import type { DType } from "@attngraph/tensor";
import { formatDims, type SymShape } from "./dims.js";
import { GraphValidationError, show } from "./errors.js";
import { inferNode } from "./infer-node.js";
import type { OpRegistry } from "./registry.js";
import { findCycle, stableTopologicalOrder } from "./topo.js";

/** A graph input (fed on every run) or weight (bound once per session). */
export interface ValueDecl {
  readonly name: string;
  readonly shape: SymShape;
  /** Element type; absent means "float32". Token ids and targets are "int32". */
  readonly dtype?: DType;
}

export interface NodeSpec {
  readonly name: string;
  readonly kind: string;
  /** Input slot name → the value feeding it (a graph input, a weight or another node). */
  readonly inputs: Readonly<Record<string, string>>;
  readonly attrs?: Readonly<Record<string, unknown>>;
}

export interface GraphNode extends NodeSpec {
  readonly attrs: Readonly<Record<string, unknown>>;
  /** The inferred output shape (symbolic dims stay names). */
  readonly shape: SymShape;
  /** The output's element type (the op's `outputDtype`, float32 by default). */
  readonly dtype: DType;
}

export interface GraphParts {
  readonly inputs: readonly ValueDecl[];
  readonly weights: readonly ValueDecl[];
  readonly nodes: readonly NodeSpec[];
  readonly outputs: readonly string[];
}

type Role = "input" | "weight" | "node";
interface StoredAttrs {
  role: Role;
  shape: SymShape;
  dtype: DType;
}

const DTYPES: readonly DType[] = ["float32", "int32"];

/** A frozen copy of a declaration; `dtype` kept only when it is not the default float32 (so JSON stays as it was). */
function freezeDecl(v: ValueDecl): ValueDecl {
  if (v.dtype !== undefined && !DTYPES.includes(v.dtype)) {
    throw new GraphValidationError(`${v.name}.dtype`, "unknown dtype", DTYPES.join(", "), show(v.dtype));
  }
  const decl = { name: v.name, shape: Object.freeze([...v.shape]) };
  return Object.freeze(v.dtype && v.dtype !== "float32" ? { ...decl, dtype: v.dtype } : decl);
}

/**
 * A validated, immutable op graph. Every node's attributes are normalised and its shape inferred; names are unique
 * across inputs, weights and nodes; there are no cycles or dangling edges. Stored in a graphology multigraph (one edge
 * per input slot, so a node may take the same value twice).
 */
export class OpGraph {
  readonly registry: OpRegistry;
  readonly inputs: readonly ValueDecl[];
  readonly weights: readonly ValueDecl[];
  /** Nodes in topological order (a stable order: declaration order where dependencies allow). */
  readonly nodes: readonly GraphNode[];
  readonly outputs: readonly string[];
  readonly #store = new MultiDirectedGraph<StoredAttrs, { slot: string }>();
  readonly #byName = new Map<string, GraphNode>();

  private constructor(registry: OpRegistry, parts: GraphParts) {
    this.registry = registry;
    this.inputs = Object.freeze(parts.inputs.map(freezeDecl));
    this.weights = Object.freeze(parts.weights.map(freezeDecl));
    for (const v of [...this.inputs, ...this.weights]) {
      const role: Role = this.inputs.includes(v) ? "input" : "weight";
      this.#addName(v.name, role, v.shape, v.dtype ?? "float32");
    }
    for (const n of parts.nodes) this.#addName(n.name, "node", [], "float32");
    for (const n of parts.nodes) {
      for (const [slot, src] of Object.entries(n.inputs)) {
        if (!this.#store.hasNode(src)) {
          throw new GraphValidationError(
            `${n.name}.${slot}`,
            "input refers to no value in the graph",
            "a graph input, weight or node name",
            show(src),
            "dangling-edge",
          );
        }
        this.#store.addDirectedEdge(src, n.name, { slot });
      }
    }
    const index = new Map(parts.nodes.map((n, i) => [n.name, i] as const));
    const deps = parts.nodes.map((n) => Object.values(n.inputs).flatMap((src) => index.get(src) ?? []));
    const order = stableTopologicalOrder(deps);
    if (!order) {
      const cycle = findCycle(deps).map((i) => parts.nodes[i]!.name);
      throw new GraphValidationError("graph", "the graph has a cycle", "an acyclic graph", cycle.join(" → "), "cycle");
    }
    const nodes: GraphNode[] = [];
    for (const i of order) {
      const node = this.#infer(parts.nodes[i]!);
      this.#store.mergeNodeAttributes(node.name, { shape: node.shape, dtype: node.dtype });
      this.#byName.set(node.name, node);
      nodes.push(node);
    }
    this.nodes = Object.freeze(nodes);
    if (parts.outputs.length === 0)
      throw new GraphValidationError("graph.outputs", "a graph needs at least one output", "a node name", "none");
    for (const out of parts.outputs) {
      if (!this.#byName.has(out))
        throw new GraphValidationError("graph.outputs", "output is not a node", "a node name", show(out));
    }
    this.outputs = Object.freeze([...parts.outputs]);
  }

  /** Validates the parts and builds the graph; throws GraphValidationError naming the node or field at fault. */
  static create(registry: OpRegistry, parts: GraphParts): OpGraph {
    return new OpGraph(registry, parts);
  }

  #addName(name: string, role: Role, shape: SymShape, dtype: DType): void {
    if (typeof name !== "string" || name.length === 0)
      throw new GraphValidationError("graph", "invalid name", "a non-empty string", show(name));
    if (this.#store.hasNode(name)) {
      throw new GraphValidationError(
        name,
        "duplicate name",
        "names unique across inputs, weights and nodes",
        `a second ${role} named ${show(name)}`,
        "duplicate-name",
      );
    }
    this.#store.addNode(name, { role, shape, dtype });
  }

  #infer(spec: NodeSpec): GraphNode {
    const {
      attrs: normalized,
      shape,
      dtype,
    } = inferNode(this.registry, spec, (v) =>
      this.#store.hasNode(v) ? { shape: this.shapeOf(v), dtype: this.dtypeOf(v) } : undefined,
    );
    for (const [k, v] of Object.entries(normalized)) if (Array.isArray(v)) normalized[k] = Object.freeze([...v]);
    return Object.freeze({
      name: spec.name,
      kind: spec.kind,
      inputs: Object.freeze({ ...spec.inputs }),
      attrs: Object.freeze(normalized),
      shape: Object.freeze([...shape]),
      dtype,
    });
  }

  has(name: string): boolean {
    return this.#store.hasNode(name);
  }

  /** The node with this name; an error naming it if there is none. */
  node(name: string): GraphNode {
    const n = this.#byName.get(name);
    if (!n)
      throw new GraphValidationError(name, "no such node", `one of ${[...this.#byName.keys()].join(", ")}`, show(name));
    return n;
  }

  /** "input", "weight" or "node". */
  roleOf(name: string): Role {
    if (!this.#store.hasNode(name)) throw new GraphValidationError(name, "no such value in the graph");
    return this.#store.getNodeAttribute(name, "role");
  }

  shapeOf(name: string): SymShape {
    if (!this.#store.hasNode(name)) throw new GraphValidationError(name, "no such value in the graph");
    return this.#store.getNodeAttribute(name, "shape");
  }

  /** The element type of a value: declared for inputs and weights, the op's output dtype for nodes. */
  dtypeOf(name: string): DType {
    if (!this.#store.hasNode(name)) throw new GraphValidationError(name, "no such value in the graph");
    return this.#store.getNodeAttribute(name, "dtype");
  }

  /** Nodes that read this value, with the slot they read it into. */
  consumers(name: string): { node: string; slot: string }[] {
    return this.#store.mapOutEdges(name, (_e, a, _s, target) => ({ node: target, slot: a.slot }));
  }

  /** The parts this graph was made of (normalised attributes), e.g. to derive an edited graph. */
  parts(): GraphParts {
    return {
      inputs: this.inputs,
      weights: this.weights,
      nodes: this.nodes.map(({ name, kind, inputs, attrs }) => ({ name, kind, inputs, attrs })),
      outputs: this.outputs,
    };
  }

  /** A one-line-per-node summary: `name = kind(inputs) [shape]`. */
  toString(): string {
    const lines = [
      ...this.inputs.map(
        (v) => `input  ${v.name} ${formatDims(v.shape)}${v.dtype && v.dtype !== "float32" ? ` ${v.dtype}` : ""}`,
      ),
      ...this.weights.map(
        (v) => `weight ${v.name} ${formatDims(v.shape)}${v.dtype && v.dtype !== "float32" ? ` ${v.dtype}` : ""}`,
      ),
      ...this.nodes.map((n) => `${n.name} = ${n.kind}(${Object.values(n.inputs).join(", ")}) ${formatDims(n.shape)}`),
      `outputs ${this.outputs.join(", ")}`,
    ];
    return lines.join("\n");
  }
}
