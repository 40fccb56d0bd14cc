// Gradient accumulation in the training graph, nanoGPT's gradient_accumulation_steps: each parameter's gradient goes
// into a running sum (a state weight `<p>.grad.acc`, updated every micro step) scaled by 1 / n as nanoGPT scales each
// microbatch's loss, by a grad-accumulate node that restarts the sum at micro step 1 (input `train.micro`), so nothing
// has to zero it between updates. The clipping and the optimizer read the sum: only the last micro step's update of
// them counts (the trainer's other micro steps update the sums alone).
import { GraphValidationError, type GraphBuilder, type SymShape } from "@attngraph/graph";

/** The one-element input of the micro step k (1 first) with gradient accumulation (grad-accumulate's step). */
export const MICRO_STEP_INPUT = "train.micro";

export interface AccumulatedGrads {
  /** Parameter → the node of its summed gradient (`<p>.grad.acc.next`). */
  readonly grads: Readonly<Record<string, string>>;
  /** Accumulator weight → the node that replaces it after each micro step (compile's `updates`). */
  readonly updates: Readonly<Record<string, string>>;
  /** The accumulators (zeros at the start; restarted by micro step 1 anyway). */
  readonly state: readonly { readonly name: string; readonly shape: SymShape }[];
  readonly micro: string;
}

/** n, checked: an integer >= 1 (1: no accumulation). */
export function checkAccumulate(n: unknown): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1)
    throw new GraphValidationError("train.accumulate", "invalid number of microbatches", "an integer >= 1", String(n));
  return n;
}

/** Adds the micro-step input and, per parameter of `grads` (parameter → gradient node), its accumulator and sum. */
export function addGradAccumulation(
  b: GraphBuilder,
  grads: Readonly<Record<string, string>>,
  n: number,
): AccumulatedGrads {
  const micro = b.input(MICRO_STEP_INPUT, [1]);
  const sums: Record<string, string> = {};
  const updates: Record<string, string> = {};
  const state: { name: string; shape: SymShape }[] = [];
  for (const [p, grad] of Object.entries(grads)) {
    const shape = b.shapeOf(p);
    const acc = b.weight(`${p}.grad.acc`, shape);
    sums[p] = b.add("grad-accumulate", `${p}.grad.acc.next`, { acc, grad, step: micro }, { scale: 1 / n });
    updates[acc] = sums[p];
    state.push({ name: acc, shape });
  }
  return { grads: sums, updates, state, micro };
}
