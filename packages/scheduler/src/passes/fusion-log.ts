// What a fusion pass fused and what it kept unfused and why: the summary explain() prints for each fusion pass, and
// the checks every fusion makes the same way (a kernel for the fused kind, the fused step in place of the last one).
import type { Executor } from "@attngraph/graph";
import type { DraftStep } from "./draft.js";

export class FusionLog {
  /** One line per fusion made ("a + b → kind"). */
  readonly done: string[] = [];
  /** One line per fusion not made ("node (why)"). */
  readonly kept: string[] = [];

  /** "fused …; kept unfused: …", or "nothing fused" first when none was made. */
  summary(): string {
    return [
      this.done.length ? `fused ${this.done.join("; ")}` : "nothing fused",
      ...(this.kept.length ? [`kept unfused: ${this.kept.join("; ")}`] : []),
    ].join("; ");
  }
}

/** Whether any of the executors has a kernel of `kind` for `attrs` (a fusion applies only then). */
export function anySupports(
  executors: readonly Executor[],
  kind: string,
  attrs: Readonly<Record<string, unknown>>,
): boolean {
  return executors.some((e) => e.supports(kind, attrs).ok);
}

/** The fused step that takes the place of step `last` (its node name and shape), standing for the `fused` nodes. */
export function fusedInPlaceOf(
  last: DraftStep,
  kind: string,
  attrs: DraftStep["attrs"],
  inputs: DraftStep["inputs"],
  fused: readonly string[],
): DraftStep {
  return { node: last.node, kind, attrs, inputs, shape: last.shape, fused };
}
