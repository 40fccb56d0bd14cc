// Reverse-mode differentiation as a graph transform. The result is an ordinary OpGraph: the forward nodes, then for
// every value on a path from a `wrt` to the loss its gradient `<value>.grad`, built by the ops' own backward rules
// (OpDef.vjp, beside each op's declaration). The scheduler lowers it, the buffer planner plans it and the stream taps
// it like any other graph: `session.tap("W_query.grad")`.
import { GraphBuilder, GraphValidationError, type OpGraph, type Ref, type VjpContext } from "@attngraph/graph";
import { UnsupportedError } from "@attngraph/tensor";
import { activeValues } from "./active.js";
import { GradNames } from "./names.js";

export interface GradOptions {
  /**
   * The value to differentiate. A scalar loss ([], e.g. a cross-entropy with reduction "mean") is differentiated as it
   * is. Any other node gets a graph input `<loss>.grad` of its shape, the upstream gradient, and the gradients are those
   * of L = sum(loss ⊙ <loss>.grad) (PyTorch's `loss.backward(gradient)`; golden-grad's `gradOutput`).
   */
  readonly loss: string;
  /** Inputs and weights (or nodes) to differentiate with respect to; each gets an output `<name>.grad` of its shape. */
  readonly wrt: readonly string[];
}

/** What grad() made, beside the graph: names a caller needs and what it should say in explain(). */
export interface GradResult {
  readonly graph: OpGraph;
  /** `wrt` name → the output holding its gradient. */
  readonly grads: Readonly<Record<string, string>>;
  /** The upstream-gradient input (`<loss>.grad`), when the loss is not a scalar. */
  readonly seed?: string;
  /** Notes for explain(): e.g. a wrt that does not reach the loss (its gradient is 0). */
  readonly notes: readonly string[];
  /** The `wrt` names the loss does not depend on (their gradient is 0): an optimizer leaves them alone, as PyTorch does. */
  readonly unreached: readonly string[];
}

/**
 * The gradient graph of `graph`: its nodes and outputs, plus `<w>.grad` for every `w` in `options.wrt` (outputs, in
 * that order) and the backward nodes between. Throws a GraphValidationError naming the field for a graph or options
 * that are none, and for a loss or wrt that does not exist (or is an int32 value); `unsupported: gradient of op X`
 * naming the node for an op on the path without a backward rule.
 */
export function grad(graph: OpGraph, options: GradOptions): GradResult {
  // Both are checked before use: a null would otherwise end in a TypeError that names neither grad() nor the argument.
  // The graph is recognised by its methods, not instanceof (a second copy of @attngraph/graph still makes graphs).
  if (typeof (graph as Partial<OpGraph> | null)?.has !== "function" || !Array.isArray(graph.nodes)) {
    throw new GraphValidationError(
      "grad graph",
      "not an op graph",
      "an OpGraph",
      graph === null ? "null" : typeof graph,
    );
  }
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new GraphValidationError(
      "grad options",
      "missing options",
      "{ loss: a node name, wrt: [names] }",
      Array.isArray(options) ? "an array" : String(options),
    );
  }
  const { loss, wrt } = options;
  if (typeof loss !== "string" || !graph.has(loss) || graph.roleOf(loss) !== "node") {
    throw new GraphValidationError(
      "grad.loss",
      "the loss must be a node of the graph",
      "a node name",
      JSON.stringify(loss) ?? String(loss),
    );
  }
  if (!Array.isArray(wrt) || wrt.length === 0)
    throw new GraphValidationError(
      "grad.wrt",
      "nothing to differentiate with respect to",
      "a non-empty list of names",
      JSON.stringify(wrt) ?? String(wrt),
    );
  for (const w of wrt) {
    if (typeof w !== "string" || !graph.has(w))
      throw new GraphValidationError(
        "grad.wrt",
        "no such value in the graph",
        "an input, weight or node name",
        JSON.stringify(w),
      );
    if (graph.dtypeOf(w) !== "float32")
      throw new GraphValidationError(`grad.wrt.${w}`, "an int32 value has no gradient", "a float32 value", "int32");
  }
  if (new Set(wrt).size !== wrt.length)
    throw new GraphValidationError("grad.wrt", "a name is listed twice", "distinct names", wrt.join(", "));
  if (wrt.includes(loss))
    throw new GraphValidationError(
      "grad.wrt",
      "the loss itself is no variable to differentiate by (its gradient is the seed)",
      "inputs, weights or nodes before the loss",
      loss,
    );
  if (graph.dtypeOf(loss) !== "float32")
    throw new GraphValidationError("grad.loss", "an int32 value cannot be differentiated", "a float32 node", "int32");

  const b = GraphBuilder.from(graph);
  const active = activeValues(graph, loss, wrt);
  const names = new GradNames(graph, active);
  const lossShape = graph.shapeOf(loss);
  const seed = lossShape.length === 0 ? undefined : b.input(`${loss}.grad`, lossShape);
  if (seed !== undefined) names.contribute(loss, seed);

  for (const node of [...graph.nodes].reverse()) {
    if (!active.has(node.name)) continue;
    const g = node.name === loss && seed === undefined ? undefined : names.finish(b, node.name);
    if (g === null) continue; // every consumer's rule gave this value no gradient: nothing flows back through it
    const def = graph.registry.get(node.kind, node.name);
    const inputs = def.inputs.map((spec) => node.inputs[spec.name]);
    const needs = inputs.map((v) => v !== undefined && active.has(v));
    if (!needs.some(Boolean)) continue; // a `wrt` node itself: nothing before it is differentiated
    if (!def.vjp)
      throw new UnsupportedError(`gradient of op ${node.kind} (node ${node.name}): the op declares no backward rule`, {
        subject: node.name,
      });
    const ctx: VjpContext<Record<string, unknown>> = {
      node: node.name,
      attrs: node.attrs,
      inputs,
      output: node.name,
      grad: g,
      needs: (i) => needs[i] === true,
      add: (kind, name, ins, attrs = {}) => b.add(kind, `${node.name}.vjp.${name}`, ins, attrs),
      addGrad: (i, kind, ins, attrs = {}) => b.add(kind, names.nameFor(inputs[i]!, node.name, i), ins, attrs),
      shapeOf: (v) => b.shapeOf(v),
      unsupported: (why): never => {
        throw new UnsupportedError(`gradient of op ${node.kind} (node ${node.name}): ${why}`, { subject: node.name });
      },
    };
    const out = def.vjp(ctx);
    inputs.forEach((v, i) => {
      const d = out[i];
      if (d === undefined || v === undefined || !needs[i]) return;
      const want = b.shapeOf(v);
      const got = b.shapeOf(d);
      if (want.length !== got.length || want.some((x, j) => x !== got[j])) {
        throw new GraphValidationError(
          `${node.name}.vjp`,
          `the backward rule of op ${node.kind} gave input ${def.inputs[i]!.name} a gradient of another shape`,
          `[${want.join(", ")}]`,
          `[${got.join(", ")}]`,
        );
      }
      names.contribute(v, d);
    });
  }

  const grads: Record<string, string> = {};
  const notes: string[] = [];
  const unreached: string[] = [];
  for (const w of wrt) {
    const g = active.has(w) ? names.finish(b, w) : null;
    if (g === null) {
      notes.push(`${w} does not reach ${loss}: its gradient ${w}.grad is 0`);
      unreached.push(w);
    }
    grads[w] = g ?? names.zeros(b, w);
  }
  const outputs = [...graph.outputs, ...(graph.outputs.includes(loss) ? [] : [loss]), ...wrt.map((w) => grads[w]!)];
  b.output(...outputs);
  return { graph: b.build(), grads, ...(seed ? { seed } : {}), notes, unreached };
}

export type { Ref };
