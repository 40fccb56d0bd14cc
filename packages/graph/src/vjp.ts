// What an op's backward rule sees. A rule is an op's vector-Jacobian product written as graph nodes: given the
// gradient of its output, it adds the nodes that compute the gradient of each input, through `add` (the same checks
// as GraphBuilder.add). @attngraph/autodiff's `grad()` calls the rules in reverse order and sums the contributions
// when a value feeds several nodes; a rule never sees the rest of the graph.
import type { SymShape } from "./dims.js";

export interface VjpContext<A extends object = Record<string, unknown>> {
  /** The forward node's name (the rule's own nodes are named after it by `name`). */
  readonly node: string;
  readonly attrs: A;
  /** The forward node's input values in the op's declared order; `undefined` for an absent optional input. */
  readonly inputs: readonly (string | undefined)[];
  /** The forward node's output value (rules that need it, e.g. softmax's, read it instead of recomputing). */
  readonly output: string;
  /**
   * The gradient of the output. `undefined` only on the loss node of a scalar loss, where it is 1: a rule that cannot
   * take that (every rule but cross-entropy's) fails through `unsupported`.
   */
  readonly grad: string | undefined;
  /** Whether input `i` needs a gradient (a float value between a `wrt` and the loss). Others may be left undefined. */
  needs(i: number): boolean;
  /** Adds a node computing part of a gradient, named `<node>.vjp.<name>`, and returns its value. */
  add(
    kind: string,
    name: string,
    inputs: Readonly<Record<string, string | undefined>>,
    attrs?: Readonly<Record<string, unknown>>,
  ): string;
  /**
   * Adds the node that is input `i`'s gradient: named as grad() wants it (`<value>.grad` when this is the value's only
   * gradient), so no extra node is needed. Use it for the last node of each input's gradient.
   */
  addGrad(
    i: number,
    kind: string,
    inputs: Readonly<Record<string, string | undefined>>,
    attrs?: Readonly<Record<string, unknown>>,
  ): string;
  /** The (symbolic) shape of any value in the graph being built. */
  shapeOf(value: string): SymShape;
  /** Throws `unsupported: gradient of op <kind> …` naming the node. */
  unsupported(why: string): never;
}

/**
 * An op's backward rule: returns the gradient of each input (declared order), `undefined` where none is needed or the
 * input is absent. A returned value must have its input's shape.
 */
export type VjpRule<A extends object = Record<string, unknown>> = (
  ctx: VjpContext<A>,
) => readonly (string | undefined)[];
