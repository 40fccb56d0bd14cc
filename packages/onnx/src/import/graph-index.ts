// Who produces and who reads each value of an ONNX graph, and which values are static: known at import without running
// anything (initializers, Constant nodes, the Shape of any value, since every dim is fixed at import, and what static
// values alone compute). Pattern matching reads this structure before any value is folded.
import { HOST_OPS } from "./host-ops.js";
import type { ModelIn, NodeIn } from "./read-model.js";

export interface Use {
  readonly node: NodeIn;
  readonly input: number;
}

/** Ops whose result depends only on the input's shape. */
const SHAPE_ONLY = new Set(["Shape", "Size"]);

export class GraphIndex {
  readonly producer = new Map<string, NodeIn>();
  readonly uses = new Map<string, Use[]>();
  readonly outputs: ReadonlySet<string>;
  readonly static = new Set<string>();

  constructor(
    readonly model: ModelIn,
    /** Nodes that stay ops although their inputs are static (an embedding table read at constant positions). */
    keepAsOp: (node: NodeIn) => boolean,
  ) {
    this.outputs = new Set(model.outputs.map((o) => o.name));
    for (const name of model.initializers.keys()) this.static.add(name);
    for (const n of model.nodes) {
      n.inputs.forEach((v, i) => {
        if (!v) return;
        const list = this.uses.get(v) ?? [];
        list.push({ node: n, input: i });
        this.uses.set(v, list);
      });
      for (const o of n.outputs) if (o) this.producer.set(o, n);
      const present = n.inputs.filter((v) => v !== "");
      const isStatic =
        n.opType === "Constant" ||
        SHAPE_ONLY.has(n.opType) ||
        (n.domain === "" &&
          Object.hasOwn(HOST_OPS, n.opType) &&
          present.every((v) => this.static.has(v)) &&
          !keepAsOp(n));
      if (isStatic) for (const o of n.outputs) if (o) this.static.add(o);
    }
  }

  isStatic(value: string): boolean {
    return this.static.has(value);
  }

  /** The node producing `value`, when it is a runtime (not static) value made by a node of `opType`. */
  made(value: string | undefined, opType: string): NodeIn | undefined {
    if (value === undefined || this.static.has(value)) return undefined;
    const p = this.producer.get(value);
    return p && p.opType === opType && p.domain === "" ? p : undefined;
  }

  /** True when `value` is read by nothing but `node` (and is not a graph output): safe to fold into a pattern. */
  onlyFeeds(value: string, node: NodeIn): boolean {
    if (this.outputs.has(value)) return false;
    const u = this.uses.get(value) ?? [];
    return u.length > 0 && u.every((x) => x.node === node);
  }

  usesOf(value: string): readonly Use[] {
    return this.uses.get(value) ?? [];
  }
}
