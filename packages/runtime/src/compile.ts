import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { lower, type LowerOptions } from "@attngraph/scheduler";
import type { AnyTensor } from "@attngraph/tensor";
import { checkWeights } from "./check-values.js";
import { Session } from "./session.js";
import type { TapPolicy } from "./taps.js";

export interface CompileOptions extends LowerOptions {
  /**
   * Every weight the graph declares, by name. Copied here: changing these tensors later changes nothing; use
   * `session.setWeights()` (every executor then sees the new values from the next run on).
   */
  readonly weights?: Readonly<Record<string, AnyTensor>>;
  /**
   * The most bytes one run may plan for any single intermediate value and for each executor's arena (default 4 GiB;
   * `Infinity` for no limit). A run whose input shapes need more rejects with a MemoryLimitError naming the node,
   * before anything is allocated.
   */
  readonly maxArenaBytes?: number;
  /** How tapped tensors reach subscribers (default `{ delivery: "settle", buffer: 1024 }`; see TapPolicy). */
  readonly taps?: Partial<TapPolicy>;
}

/**
 * Lowers the graph for the given executors, checks the weights against the graph's declarations, initialises the
 * executors the plan uses, and returns a session ready to run.
 *
 * ```ts
 * const session = await compile(graph, { executors: [createCpuExecutor()], weights });
 * const { output } = await session.run({ x });
 * ```
 */
export async function compile(graph: OpGraph, options: CompileOptions): Promise<Session> {
  if (typeof options !== "object" || options === null) {
    throw new GraphValidationError("compile options", "missing options", "{ executors: [...], weights }", String(options));
  }
  const { maxArenaBytes, taps } = options;
  if (maxArenaBytes !== undefined && !(typeof maxArenaBytes === "number" && maxArenaBytes > 0)) {
    throw new GraphValidationError("compile.maxArenaBytes", "invalid memory limit", "a number of bytes > 0 (or Infinity)", String(maxArenaBytes));
  }
  if (taps?.delivery !== undefined && taps.delivery !== "settle" && taps.delivery !== "detached") {
    throw new GraphValidationError("compile.taps.delivery", "unknown tap delivery", '"settle" or "detached"', String(taps.delivery));
  }
  if (taps?.buffer !== undefined && !(Number.isSafeInteger(taps.buffer) && taps.buffer >= 1)) {
    throw new GraphValidationError("compile.taps.buffer", "invalid tap buffer", "an integer >= 1", String(taps.buffer));
  }
  lower(graph, options); // the untapped plan: every placement error surfaces here, before any run
  const weights = checkWeights(graph, options.weights);
  // Any plan (one per set of taps) may use any executor, so initialise them all before the first run.
  for (const ex of options.executors) await ex.init?.();
  return new Session(graph, options, weights, {
    ...(maxArenaBytes === undefined ? {} : { maxArenaBytes }),
    ...(taps === undefined ? {} : { taps }),
  });
}
