import { GraphValidationError, formatDims, type Executor, type OpGraph } from "@attngraph/graph";
import { lower, type LowerOptions } from "@attngraph/scheduler";
import type { AnyTensor } from "@attngraph/tensor";
import { checkObjectOption } from "./check-option.js";
import { checkWeights } from "./check-values.js";
import { Session } from "./session.js";
import type { TapPolicy } from "./taps.js";
import { checkValidation, type ValidateOptions } from "./validate.js";

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
  /**
   * Weight name → node: after each run that finishes, the node's value becomes that weight's value, kept on the
   * executor that computed it (a training step's new parameters and optimizer state: nothing goes through the host).
   * A failed or cancelled run changes nothing. The node must have the weight's shape; each node updates one weight.
   * `session.readWeights()` reads the current values back.
   */
  readonly updates?: Readonly<Record<string, string>>;
  /**
   * Debugging switch, off by default (it reads every value back): a run fails with a NumericsError naming the first
   * node that produced NaN or ±∞ (−∞ only where mask and ALiBi hide scores), e.g. the gradient that blew up.
   */
  readonly checkNumerics?: boolean;
  /**
   * Debugging switch, off by default: every step also runs on this executor, on the same inputs, and the first node
   * whose results differ beyond `validate.tolerance` fails the run with a ValidationError (or, `validate.mode: "warn"`,
   * is reported on events$ as "validation-mismatch"). A node the validator has no kernel for is not compared.
   */
  readonly validateWith?: Executor;
  readonly validate?: ValidateOptions;
  /**
   * Training-mode dropout: "per-run" (default) draws new masks on every run, as PyTorch does on every forward pass (the
   * run's dropout step folded into each seed: `RunOptions.dropoutStep`, by default the run's index); "fixed" draws
   * the masks of the graph's seeds on every run (one fixed sub-network, for a reproducible comparison).
   */
  readonly dropoutMasks?: "per-run" | "fixed";
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
  checkObjectOption(options, "compile options", "missing options", "{ executors: [...], weights }");
  const { maxArenaBytes, taps } = options;
  if (maxArenaBytes !== undefined && !(typeof maxArenaBytes === "number" && maxArenaBytes > 0)) {
    throw new GraphValidationError(
      "compile.maxArenaBytes",
      "invalid memory limit",
      "a number of bytes > 0 (or Infinity)",
      String(maxArenaBytes),
    );
  }
  if (taps?.delivery !== undefined && taps.delivery !== "settle" && taps.delivery !== "detached") {
    throw new GraphValidationError(
      "compile.taps.delivery",
      "unknown tap delivery",
      '"settle" or "detached"',
      String(taps.delivery),
    );
  }
  if (taps?.buffer !== undefined && !(Number.isSafeInteger(taps.buffer) && taps.buffer >= 1)) {
    throw new GraphValidationError("compile.taps.buffer", "invalid tap buffer", "an integer >= 1", String(taps.buffer));
  }
  if (options.dropoutMasks !== undefined && options.dropoutMasks !== "per-run" && options.dropoutMasks !== "fixed") {
    throw new GraphValidationError(
      "compile.dropoutMasks",
      "unknown dropout masks mode",
      '"per-run" or "fixed"',
      String(options.dropoutMasks),
    );
  }
  const updates = checkUpdates(graph, options.updates);
  lower(graph, { ...options, keep: [...updates.values()] }); // the untapped plan: every placement error surfaces here, before any run
  const weights = checkWeights(graph, options.weights);
  const validation = checkValidation(options.validateWith, options.validate);
  await validation?.executor.init?.();
  // Any plan (one per set of taps) may use any executor, so initialise them all before the first run.
  for (const ex of options.executors) await ex.init?.();
  return new Session(graph, options, weights, {
    ...(maxArenaBytes === undefined ? {} : { maxArenaBytes }),
    ...(taps === undefined ? {} : { taps }),
    ...(updates.size ? { updates } : {}),
    ...(options.checkNumerics === true ? { checkNumerics: true } : {}),
    ...(validation ? { validation } : {}),
    ...(options.dropoutMasks === undefined ? {} : { dropoutMasks: options.dropoutMasks }),
  });
}

/** The `updates` option as a map, each entry checked: a float32 weight ← a node of exactly its shape, one node per weight. */
function checkUpdates(graph: OpGraph, updates: CompileOptions["updates"]): Map<string, string> {
  const out = new Map<string, string>();
  if (updates === undefined) return out;
  checkObjectOption(updates, "compile.updates", "invalid updates", "an object of weight name → node name");
  const weights = new Map(graph.weights.map((w) => [w.name, w] as const));
  const used = new Map<string, string>();
  for (const [weight, node] of Object.entries(updates)) {
    const field = `compile.updates.${weight}`;
    const decl = weights.get(weight);
    if (!decl)
      throw new GraphValidationError(
        field,
        "no weight of this name",
        `one of ${[...weights.keys()].join(", ") || "(no weights)"}`,
        weight,
      );
    if (typeof node !== "string" || !graph.has(node) || graph.roleOf(node) !== "node")
      throw new GraphValidationError(field, "no node of this name", "a node name", String(node));
    const shape = graph.shapeOf(node);
    if (shape.length !== decl.shape.length || shape.some((d, i) => d !== decl.shape[i])) {
      throw new GraphValidationError(
        field,
        "the node's shape is not the weight's",
        formatDims(decl.shape),
        `${node} ${formatDims(shape)}`,
      );
    }
    if ((decl.dtype ?? "float32") !== graph.dtypeOf(node))
      throw new GraphValidationError(
        field,
        "the node's dtype is not the weight's",
        decl.dtype ?? "float32",
        graph.dtypeOf(node),
      );
    const twice = used.get(node);
    if (twice)
      throw new GraphValidationError(
        field,
        "a node can update one weight only",
        `a node other than ${node}`,
        `${node}, which updates ${twice} too`,
      );
    used.set(node, weight);
    out.set(weight, node);
  }
  return out;
}
