// The state of one import while ONNX nodes become attngraph nodes: what each ONNX value is now (a host tensor folded
// at import, or an attngraph value), the graph under construction, the weights it binds, the names that point back to
// the ONNX file, and the record explain() prints.
import { GraphBuilder, type Expr, type ExprType, type Ref } from "@attngraph/graph";
import { INT32_MAX, INT32_MIN, Tensor, type AnyTensor, type DType } from "@attngraph/tensor";
import type { GraphIndex } from "./graph-index.js";
import { formatShape, isFloat, type HostTensor } from "./host-tensor.js";
import { OnnxImportError, nodeError } from "./import-error.js";
import { materialize } from "./pointwise.js";
import type { NodeIn } from "./read-model.js";

/**
 * An elementwise value held as an expression until something reads it (pointwise.ts): its leaves are the attngraph
 * values it reads (by key `leaf:<ref>`), `onnx` the nodes it stands for, `node` the last of them.
 */
export interface ExprVal {
  readonly kind: "expr";
  readonly expr: Expr;
  readonly type: ExprType;
  readonly shape: readonly number[];
  readonly leaves: ReadonlyMap<string, { readonly ref: Ref; readonly shape: readonly number[] }>;
  readonly onnx: readonly NodeIn[];
  readonly node: NodeIn | undefined;
}

/** An attngraph node's inputs (an absent optional one undefined) and attributes, as LowerContext.add takes them. */
type NodeInputs = Readonly<Record<string, Ref | undefined>>;
type NodeAttrs = Readonly<Record<string, unknown>>;

export type Val =
  | { readonly kind: "const"; readonly t: HostTensor }
  | {
      readonly kind: "node";
      readonly ref: Ref;
      readonly shape: readonly number[];
      readonly dtype: DType;
      readonly view?: IntView;
    }
  | ExprVal;

/**
 * An integer tensor reshaped: attngraph reshapes float values only, so the value stays the original int32 tensor
 * (`ref`, of `shape`) and the Val carries the ONNX shape; the readers that take ids of any shape (embedding,
 * cross-entropy's targets) read the original and reshape their float result instead.
 */
export interface IntView {
  readonly ref: Ref;
  readonly shape: readonly number[];
}

/** One attngraph node and the ONNX nodes it stands for. */
export interface Built {
  readonly name: string;
  readonly kind: string;
  readonly onnx: readonly string[];
  readonly note?: string;
}

/** One attention chain of the imported graph: score → [mask] → softmax → weighted-sum. */
export interface Chain {
  /** The ONNX path of its Softmax ("/h.0/attn/"), the prefix of its aliases. */
  readonly scope: string;
  /** The ONNX nodes it stands for. */
  readonly onnx: readonly string[];
  /** Its attngraph nodes. */
  readonly nodes: readonly string[];
  /** What the mask hides ("causal top-left", "0/1 mask [L, S]", "key padding", "bias"), or "none". */
  readonly mask: string;
}

export class LowerContext {
  readonly b = new GraphBuilder();
  readonly env = new Map<string, Val>();
  readonly weights: Record<string, AnyTensor> = {};
  /** ONNX node names, ONNX value names and short aliases ("/h.0/attn/weights") → attngraph node names. */
  readonly aliases = new Map<string, string>();
  readonly built: Built[] = [];
  readonly chains: Chain[] = [];
  readonly fused: { kind: string; onnx: readonly string[]; name: string }[] = [];
  folded = 0;
  /** The kinds of the pattern groups built (a group whose constants did not fit is not counted). */
  readonly patterns: string[] = [];

  constructor(readonly index: GraphIndex) {}

  /** The value as it is now: an expression stays one (pointwise.ts reads it so). */
  rawVal(name: string, node: NodeIn): Val {
    const v = this.env.get(name);
    if (!v)
      throw nodeError(
        node,
        `input ${name} is not defined before the node`,
        "a graph input, an initializer or an earlier node's output",
        name,
      );
    return v;
  }

  /**
   * Graph output `name` as a node value: an expression held for it becomes a score-mod node first, as for any reader.
   * Errors name `output <name>`.
   */
  outputVal(name: string): Exclude<Val, ExprVal> {
    return this.val(name, {
      name: `output ${name}`,
      opType: "output",
      domain: "",
      inputs: [name],
      outputs: [],
      attrs: new Map(),
      index: -1,
    });
  }

  /** The value as a node reads it: an expression becomes a score-mod node first. */
  val(name: string, node: NodeIn): Exclude<Val, ExprVal> {
    const v = this.rawVal(name, node);
    if (v.kind !== "expr") return v;
    materialize(this, name, v, node);
    return this.env.get(name) as Exclude<Val, ExprVal>;
  }

  constOf(name: string | undefined): HostTensor | undefined {
    if (!name) return undefined;
    const v = this.env.get(name);
    return v?.kind === "const" ? v.t : undefined;
  }

  /** The node value's attngraph reference; a constant becomes a weight named after its ONNX value. */
  ref(name: string, node: NodeIn): Ref {
    const v = this.val(name, node);
    if (v.kind === "node" && v.view)
      this.unsupported(
        node,
        `an integer tensor reshaped from ${formatShape(v.view.shape)} to ${formatShape(v.shape)} read by ${node.opType} (attngraph reshapes float values; embeddings and losses take ids of any shape)`,
      );
    return v.kind === "node" ? v.ref : this.weight(name, v.t);
  }

  /** A weight holding `t` (int types as int32), declared once per name. */
  weight(wanted: string, t: HostTensor): Ref {
    let name = wanted;
    // One ONNX value may be read in two layouts (a bias as [1, N] and as [N]): each layout is a weight of its own.
    for (let i = 2; Object.hasOwn(this.weights, name) || this.taken(name); i++) {
      if (Object.hasOwn(this.weights, name) && this.weights[name]!.shape.join() === t.shape.join()) return name;
      name = `${wanted}#${i}`;
    }
    const float = isFloat(t.dtype);
    if (!float && t.data.some((v) => v < INT32_MIN || v > INT32_MAX))
      throw new OnnxImportError(
        `weight ${name}`,
        "an integer constant read by the graph must fit int32",
        "values in int32",
        "a value outside",
      );
    this.b.weight(name, [...t.shape], float ? "float32" : "int32");
    this.weights[name] = float ? Tensor.from(t.data, [...t.shape]) : Tensor.int32(t.data, [...t.shape]);
    return name;
  }

  /** The name for the attngraph node that makes ONNX value `output` of `node`: the graph output's name, else the node's. */
  nameFor(node: NodeIn, output: string, suffix = ""): string {
    let name = this.index.outputs.has(output) && !suffix ? output : `${node.name}${suffix}`;
    if (this.taken(name)) name = `${node.name}:${output}${suffix}`;
    for (let i = 2; this.taken(name); i++) name = `${node.name}${suffix}#${i}`;
    return name;
  }

  taken(name: string): boolean {
    try {
      this.b.shapeOf(name);
      return true;
    } catch {
      return false;
    }
  }

  /** Adds an attngraph node standing for `onnx` nodes; aliases their names to it. */
  add(kind: string, name: string, inputs: NodeInputs, attrs: NodeAttrs, onnx: readonly NodeIn[], note?: string): Ref {
    const ref = this.b.add(kind, name, inputs, attrs);
    this.built.push({ name: ref, kind, onnx: onnx.map((n) => n.name), ...(note ? { note } : {}) });
    for (const n of onnx) if (!this.aliases.has(n.name)) this.aliases.set(n.name, ref);
    return ref;
  }

  /**
   * Adds the attngraph node that makes ONNX node `node`'s first output (named by nameFor, standing for `onnx`) and sets
   * that output to it: the last step of every lowering that ends in one node.
   */
  addOutput(
    node: NodeIn,
    kind: string,
    inputs: NodeInputs,
    attrs: NodeAttrs,
    onnx: readonly NodeIn[],
    note?: string,
  ): Ref {
    const out = node.outputs[0]!;
    const ref = this.add(kind, this.nameFor(node, out), inputs, attrs, onnx, note);
    this.setNode(out, ref);
    return ref;
  }

  /** ONNX value `output` is now attngraph value `ref`. */
  setNode(output: string, ref: Ref): void {
    this.env.set(output, { kind: "node", ref, shape: this.b.shapeOf(ref) as number[], dtype: this.b.dtypeOf(ref) });
    if (!this.aliases.has(output)) this.aliases.set(output, ref);
  }

  shapeOf(name: string, node: NodeIn): readonly number[] {
    const v = this.rawVal(name, node);
    return v.kind === "const" ? v.t.shape : v.shape;
  }

  fail(node: NodeIn, what: string, expected: string, got: string): never {
    throw nodeError(node, what, expected, got);
  }

  /** A node in a form attngraph has no op for: named, with what would be needed. */
  unsupported(node: NodeIn, what: string, got?: string): never {
    const shapes = node.inputs
      .filter(Boolean)
      .map((v) =>
        this.env.has(v)
          ? `${this.env.get(v)!.kind === "const" ? "constant" : "runtime"} ${formatShape(this.shapeOf(v, node))}`
          : "?",
      );
    throw nodeError(node, `unsupported: ${what}`, undefined, got ?? `inputs ${shapes.join(", ")}`);
  }
}
