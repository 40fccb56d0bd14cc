// run_with_cache: one run's outputs and every named intermediate, through taps (the session reads back only those).
import type { RunOptions, Session } from "@attngraph/runtime";
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
export async function runWithCache(session: Session, inputs: Readonly<Record<string, AnyTensor>>, names: readonly string[], options: RunOptions = {}): Promise<CachedRun> {
  const cache = new Map<string, Tensor>();
  if (names.length === 0) return { outputs: await session.run(inputs, options), cache };
  // The tap is made per call: a run starts with the subscribers of its moment (see the runtime's tap delivery).
  const sub = session.tap([...names]).subscribe(({ node, tensor }) => cache.set(node, tensor));
  try {
    const outputs = await session.run(inputs, options);
    return { outputs, cache };
  } finally {
    sub.unsubscribe();
  }
}
