import type { DType } from "@attngraph/tensor";
import { formatDims, type SymShape } from "./dims.js";
import { GraphValidationError, show } from "./errors.js";
import { inferShape, makeContext, normalizeAttrs } from "./op-def.js";
import type { OpRegistry } from "./registry.js";

/** A node as written (by a builder or in JSON): op kind, input slots → value names, raw attributes. */
export interface NodeInput {
  readonly name: string;
  readonly kind: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly attrs?: Readonly<Record<string, unknown>>;
}

/** What inferNode needs to know of a value a node reads. */
export interface ValueInfo {
  readonly shape: SymShape;
  readonly dtype: DType;
}

/**
 * Checks one node against its op's declaration and infers its shape: known op kind, only declared input slots, every
 * required slot filled with an existing value of the slot's dtype, attributes normalised, shape rule run. The one place
 * both the GraphBuilder (node by node) and OpGraph (whole graphs, e.g. from JSON) check nodes.
 */
export function inferNode(
  registry: OpRegistry,
  node: NodeInput,
  valueInfo: (value: string) => ValueInfo | undefined,
): { attrs: Record<string, unknown>; shape: SymShape; dtype: DType } {
  const def = registry.get(node.kind, node.name);
  const ctx = makeContext(node.name);
  const declared = new Set(def.inputs.map((i) => i.name));
  for (const slot of Object.keys(node.inputs)) {
    if (!declared.has(slot)) ctx.fail(slot, `unknown input for op ${def.kind}`, [...declared].join(", "), show(slot));
  }
  const shapes = def.inputs.map((i) => {
    // Own keys only: an op may declare a slot named "valueOf" or "constructor", which a node that leaves it empty
    // must not fill with Object.prototype's member.
    const ref = Object.hasOwn(node.inputs, i.name) ? node.inputs[i.name] : undefined;
    if (ref === undefined) {
      if (!i.optional) ctx.fail(i.name, `missing input of op ${def.kind}`, "a value name");
      return undefined;
    }
    const v = valueInfo(ref);
    if (!v) {
      throw new GraphValidationError(
        `${node.name}.${i.name}`,
        "input refers to no value in the graph",
        "a graph input, weight or node name",
        show(ref),
        "dangling-edge",
      );
    }
    const want = i.dtype ?? "float32";
    if (v.dtype !== want)
      ctx.fail(
        i.name,
        `input of op ${def.kind} has the wrong dtype`,
        want,
        `${v.dtype} ${formatDims(v.shape)} from ${show(ref)}`,
      );
    return v.shape;
  });
  const attrs = normalizeAttrs(def, node.attrs ?? {}, ctx);
  return { attrs, shape: inferShape(def, shapes, attrs, ctx), dtype: def.outputDtype ?? "float32" };
}
