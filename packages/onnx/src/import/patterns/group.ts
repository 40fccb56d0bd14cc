// A pattern's match: ONNX nodes that become one or a few attngraph nodes. Matching is structural (op types, which
// values are static, who reads what, see GraphIndex); the constants a pattern needs (GELU's 0.5, LayerNorm's
// exponent 2) are checked when the group is built, and a group whose constants do not fit is built node by node.
import type { GraphIndex } from "../graph-index.js";
import { attrInt, attrInts } from "../node-args.js";
import type { LowerContext } from "../lower-context.js";
import type { NodeIn } from "../read-model.js";

export interface Group {
  readonly kind: string;
  /** The group's last node: its first output is the value the group makes. */
  readonly terminal: NodeIn;
  /** Every other node the group stands for (none is read from outside the group). */
  readonly internal: readonly NodeIn[];
  /** Builds the group; false when its constants do not fit the pattern (nothing was built then). */
  lower(ctx: LowerContext): boolean;
}

/** The runtime and static factors of a product of Mul nodes, each Mul read only inside the product. */
export interface Factors {
  readonly runtime: string[];
  readonly statics: string[];
  readonly nodes: NodeIn[];
}

export function factorsOf(index: GraphIndex, values: readonly string[], consumer: NodeIn, op = "Mul"): Factors {
  const f: Factors = { runtime: [], statics: [], nodes: [] };
  const walk = (v: string, reader: NodeIn) => {
    const p = index.made(v, op);
    if (p && index.onlyFeeds(v, reader)) {
      f.nodes.push(p);
      for (const i of p.inputs) walk(i, p);
    } else if (index.isStatic(v)) f.statics.push(v);
    else f.runtime.push(v);
  };
  for (const v of values) walk(v, consumer);
  return f;
}

/** `value` made by an `opType` node read only by `reader`: the node, else undefined. */
export function feeding(
  index: GraphIndex,
  value: string | undefined,
  opType: string,
  reader: NodeIn,
): NodeIn | undefined {
  const p = index.made(value, opType);
  return p && index.onlyFeeds(value!, reader) ? p : undefined;
}

/** The one node reading `n`'s output, when it is an `opType` and the output is not a graph output: else undefined. */
export function onlyReader(index: GraphIndex, n: NodeIn, opType: string): NodeIn | undefined {
  const v = n.outputs[0]!;
  const uses = index.usesOf(v);
  return !index.outputs.has(v) && uses.length === 1 && uses[0]!.node.opType === opType ? uses[0]!.node : undefined;
}

/** Whether a ReduceMean/ReduceSum/ReduceMax reduces the last axis alone (and, with `keepdims`, keeps it). */
export function reducesLastAxis(ctx: LowerContext, reduce: NodeIn, rank: number, keepdims = false): boolean {
  const axes = reduce.inputs[1] ? Array.from(ctx.constOf(reduce.inputs[1])?.data ?? [NaN]) : attrInts(reduce, "axes");
  if (keepdims && attrInt(reduce, "keepdims", 1) !== 1) return false;
  return axes !== undefined && axes.length === 1 && (axes[0] === -1 || axes[0] === rank - 1);
}

/** The runtime input and the static input of a two-input node, when it has exactly one of each. */
export function splitStatic(index: GraphIndex, n: NodeIn): { runtime: string; constant: string } | undefined {
  const [a, b] = n.inputs;
  if (!a || !b) return undefined;
  if (index.isStatic(a) && !index.isStatic(b)) return { runtime: b, constant: a };
  if (index.isStatic(b) && !index.isStatic(a)) return { runtime: a, constant: b };
  return undefined;
}

/** The product of static scalars, or undefined when one is not a scalar. */
export function scalarProduct(ctx: LowerContext, values: readonly string[]): number | undefined {
  let p = 1;
  for (const v of values) {
    const t = ctx.constOf(v);
    if (t?.data.length !== 1) return undefined;
    p *= t.data[0]!;
  }
  return p;
}

export function near(a: number | undefined, b: number, tol = 1e-5): boolean {
  return a !== undefined && Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));
}
