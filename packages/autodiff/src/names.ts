// The gradient of each value, gathered from the backward rules of its consumers. A value read once gets its gradient
// named `<value>.grad` by the rule itself; a value read by several nodes (or several slots) gets one contribution per
// read, `<value>.grad.<node>.<slot>`, summed by `add` nodes into `<value>.grad`.
import type { GraphBuilder, OpGraph } from "@attngraph/graph";

export class GradNames {
  readonly #reads = new Map<string, number>();
  readonly #parts = new Map<string, string[]>();
  /** Gradients already finished: a node that is also a `wrt` is finished in the reverse pass and asked for again. */
  readonly #done = new Map<string, string | null>();

  constructor(graph: OpGraph, active: ReadonlySet<string>) {
    for (const n of graph.nodes) {
      if (!active.has(n.name)) continue;
      for (const v of Object.values(n.inputs)) if (active.has(v)) this.#reads.set(v, (this.#reads.get(v) ?? 0) + 1);
    }
  }

  /** The name a rule gives input `slot`'s gradient from `node`. */
  nameFor(value: string, node: string, slot: number): string {
    return (this.#reads.get(value) ?? 0) <= 1 ? `${value}.grad` : `${value}.grad.${node}.${slot}`;
  }

  contribute(value: string, grad: string): void {
    const list = this.#parts.get(value);
    if (list) list.push(grad);
    else this.#parts.set(value, [grad]);
  }

  /** `<value>.grad`: the sum of its contributions (null when none came: no gradient flows back through it). */
  finish(b: GraphBuilder, value: string): string | null {
    if (this.#done.has(value)) return this.#done.get(value)!;
    const made = this.#sum(b, value);
    this.#done.set(value, made);
    return made;
  }

  #sum(b: GraphBuilder, value: string): string | null {
    const parts = this.#parts.get(value) ?? [];
    const name = `${value}.grad`;
    if (parts.length === 0) return null;
    if (parts.length === 1) {
      // A rule that passed its gradient through unchanged (add, without broadcasting) made no node of that name: a
      // reshape to the same shape is a free view that gives the gradient its name, so it can be tapped.
      return parts[0] === name ? name : b.add("reshape", name, { x: parts[0] }, { shape: [...b.shapeOf(value)] });
    }
    let sum = parts[0]!;
    for (let i = 1; i < parts.length; i++)
      sum = b.add("add", i === parts.length - 1 ? name : `${name}.sum${i}`, { a: sum, b: parts[i] });
    return sum;
  }

  /**
   * `<value>.grad` = 0, for a wrt that does not reach the loss. There is no constant op: mask-grad with scale 0 gives
   * 0 · x where x is finite and 0 where it is −∞, which is 0 everywhere for the finite values weights and inputs hold.
   */
  zeros(b: GraphBuilder, value: string): string {
    return b.add("mask-grad", `${value}.grad`, { grad: value, masked: value }, { scale: 0 });
  }
}
