import type { DType } from "@attngraph/tensor";
import type { SymShape } from "./dims.js";
import { GraphValidationError, show } from "./errors.js";
import { OpGraph, type GraphParts, type NodeSpec, type ValueDecl } from "./graph.js";
import { inferNode } from "./infer-node.js";
import { createOpRegistry, type OpRegistry } from "./registry.js";

/** A reference to a value in the graph under construction: its name. */
export type Ref = string;

/**
 * Builds an OpGraph node by node. Each `add` checks the node at once (op kind, inputs, attributes, shape rule), so a
 * mistake is reported at the line that made it, naming the node.
 *
 * ```ts
 * const b = new GraphBuilder();
 * const x = b.input("x", ["B", "T", 8]);
 * const q = b.add("projection", "queries", { x, weight: b.weight("W_query", [8, 8]) });
 * const graph = b.output(q).build();
 * ```
 */
export class GraphBuilder {
  readonly registry: OpRegistry;
  readonly #inputs: ValueDecl[] = [];
  readonly #weights: ValueDecl[] = [];
  readonly #nodes: NodeSpec[] = [];
  readonly #outputs: string[] = [];
  readonly #shapes = new Map<string, SymShape>();
  readonly #dtypes = new Map<string, DType>();
  readonly #prefix: string;

  constructor(options: { registry?: OpRegistry; prefix?: string } = {}) {
    this.registry = options.registry ?? createOpRegistry();
    this.#prefix = options.prefix ? `${options.prefix}.` : "";
  }

  /**
   * Starts from an existing graph's inputs, weights and nodes, to derive an edited graph. Its outputs are not carried
   * over (there is no way to take one back): name the derived graph's outputs with `output()`.
   */
  static from(graph: OpGraph): GraphBuilder {
    const b = new GraphBuilder({ registry: graph.registry });
    const parts = graph.parts();
    for (const v of parts.inputs) b.input(v.name, v.shape, v.dtype ?? "float32");
    for (const v of parts.weights) b.weight(v.name, v.shape, v.dtype ?? "float32");
    for (const n of parts.nodes) b.#addSpec(n);
    return b;
  }

  /**
   * A graph input fed on every run. Dims may be names ("B", "T") bound by the tensors of each run. `dtype` "int32" for
   * token ids and targets (default "float32").
   */
  input(name: string, shape: SymShape, dtype: DType = "float32"): Ref {
    this.#declare(name, shape, dtype);
    this.#inputs.push(dtype === "float32" ? { name, shape } : { name, shape, dtype });
    return name;
  }

  /** A weight, bound once per session. */
  weight(name: string, shape: SymShape, dtype: DType = "float32"): Ref {
    this.#declare(name, shape, dtype);
    this.#weights.push(dtype === "float32" ? { name, shape } : { name, shape, dtype });
    return name;
  }

  /**
   * Adds a node of op `kind` named `name` (prefixed with the builder's prefix). `inputs` maps the op's input slots to
   * values. Returns the node's reference.
   */
  add(
    kind: string,
    name: string,
    inputs: Readonly<Record<string, Ref | undefined>>,
    attrs: Readonly<Record<string, unknown>> = {},
  ): Ref {
    // fromEntries defines own properties: `clean[slot] = ref` would drop a slot named "__proto__" (it sets the
    // prototype) instead of letting inferNode reject it as an unknown slot.
    const clean = Object.fromEntries(Object.entries(inputs).filter((e): e is [string, string] => e[1] !== undefined));
    return this.#addSpec({ name: this.#prefix + name, kind, inputs: clean, attrs });
  }

  #addSpec(spec: NodeSpec): Ref {
    if (this.#shapes.has(spec.name)) {
      throw new GraphValidationError(
        spec.name,
        "duplicate name",
        "names unique across inputs, weights and nodes",
        show(spec.name),
        "duplicate-name",
      );
    }
    const { attrs, shape, dtype } = inferNode(this.registry, spec, (ref) => {
      const s = this.#shapes.get(ref);
      return s && { shape: s, dtype: this.#dtypes.get(ref) ?? "float32" };
    });
    this.#shapes.set(spec.name, shape);
    this.#dtypes.set(spec.name, dtype);
    this.#nodes.push({ ...spec, attrs });
    return spec.name;
  }

  /** The inferred shape of a value added so far. */
  shapeOf(ref: Ref): SymShape {
    const s = this.#shapes.get(ref);
    if (!s) throw new GraphValidationError(ref, "no such value in the builder");
    return s;
  }

  /** The element type of a value added so far. */
  dtypeOf(ref: Ref): DType {
    this.shapeOf(ref);
    return this.#dtypes.get(ref) ?? "float32";
  }

  /** Marks nodes as graph outputs (returned by every run). */
  output(...refs: Ref[]): this {
    for (const r of refs) this.#outputs.push(r);
    return this;
  }

  /** Validates the whole graph and returns it. */
  build(): OpGraph {
    return OpGraph.create(this.registry, this.parts());
  }

  parts(): GraphParts {
    return {
      inputs: [...this.#inputs],
      weights: [...this.#weights],
      nodes: [...this.#nodes],
      outputs: [...this.#outputs],
    };
  }

  #declare(name: string, shape: SymShape, dtype: DType): void {
    if (dtype !== "float32" && dtype !== "int32")
      throw new GraphValidationError(`${name}.dtype`, "unknown dtype", "float32, int32", show(dtype));
    if (this.#shapes.has(name))
      throw new GraphValidationError(
        name,
        "duplicate name",
        "names unique across inputs, weights and nodes",
        show(name),
        "duplicate-name",
      );
    if (
      !Array.isArray(shape) ||
      !shape.every((d) => (typeof d === "string" && d.length > 0) || (Number.isSafeInteger(d) && d >= 0))
    ) {
      throw new GraphValidationError(
        name,
        "invalid shape",
        "an array of non-negative integers or dim names",
        show(shape),
      );
    }
    this.#shapes.set(name, shape);
    this.#dtypes.set(name, dtype);
  }
}

/**
 * A new graph in which `fn`'s node(s) sit after `target`: every consumer of `target` (and the graph outputs) reads the
 * value `fn` returns instead. This is how a user inserts a node of their own, e.g. soft-capping between score and mask.
 */
export function insertAfter(graph: OpGraph, target: string, fn: (b: GraphBuilder, value: Ref) => Ref): OpGraph {
  graph.node(target); // throws naming it when absent
  const parts = graph.parts();
  const b = new GraphBuilder({ registry: graph.registry });
  for (const v of parts.inputs) b.input(v.name, v.shape, v.dtype ?? "float32");
  for (const v of parts.weights) b.weight(v.name, v.shape, v.dtype ?? "float32");
  let replacement: Ref | undefined;
  for (const n of parts.nodes) {
    const inputs = Object.fromEntries(
      Object.entries(n.inputs).map(([slot, src]) => [slot, src === target && replacement ? replacement : src]),
    );
    b.add(n.kind, n.name, inputs, n.attrs);
    if (n.name === target) replacement = fn(b, target);
  }
  b.output(...parts.outputs.map((o) => (o === target ? replacement! : o)));
  return b.build();
}
