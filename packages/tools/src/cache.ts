// run_with_cache: one run's outputs and every named intermediate, through taps (the session reads back only those).
import { GraphValidationError } from "@attngraph/graph";
import type { RunOptions, Session, TapEvent } from "@attngraph/runtime";
import type { AnyTensor, Tensor } from "@attngraph/tensor";

export interface CachedRun {
  readonly outputs: Record<string, Tensor>;
  /** Node name → its value in this run (the patched value where an override applied). */
  readonly cache: ReadonlyMap<string, Tensor>;
}

/**
 * Runs `inputs` once with a tap on every name in `names` and resolves to the outputs and the tapped tensors. Taps
 * decide lowering, so a chain holding a named node runs unfused for this run; names that are no node are an error
 * before anything runs. `options` go to `session.run` (a signal, overrides).
 */
export async function runWithCache(
  session: Session,
  inputs: Readonly<Record<string, AnyTensor>>,
  names: readonly string[],
  options: RunOptions = {},
): Promise<CachedRun> {
  const cache = new Map<string, Tensor>();
  if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) {
    throw new GraphValidationError(
      "runWithCache names",
      "invalid node names",
      "a list of node names",
      Array.isArray(names) ? "a list with a non-string" : names === null ? "null" : typeof names,
    );
  }
  if (names.length === 0) return { outputs: await session.run(inputs, options), cache };
  // The run's own tap, not a session tap: a session tap sees every run that starts while it is subscribed, so calls in
  // flight together would read each other's tensors.
  if (options.tap !== undefined)
    throw new GraphValidationError(
      "runWithCache options.tap",
      "runWithCache makes the run's tap itself",
      "options without tap (name the nodes in `names`)",
      "a tap",
    );
  const tap = { nodes: [...names], next: (e: TapEvent) => void cache.set(e.node, e.tensor) };
  return { outputs: await session.run(inputs, { ...options, tap }), cache };
}
