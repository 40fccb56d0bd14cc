import type { Executor, SymShape } from "@attngraph/graph";
import type { PassReport } from "../plan.js";
import { describeMods, matchAttentionChain } from "./attention-chain.js";
import { consumerCounts, watchedAs, type DraftStep } from "./draft.js";
import { anySupports, FusionLog, fusedInPlaceOf } from "./fusion-log.js";

export interface FusionContext {
  readonly outputs: readonly string[];
  readonly watched: ReadonlySet<string>;
  /** The watched nodes an override writes (for explain's reasons). */
  readonly patched?: ReadonlySet<string>;
  readonly executors: readonly Executor[];
  readonly overrides: ReadonlyMap<string, string>;
  /** The shape of a value that is no step (a graph input): a user mask's or bias's, to index it. */
  readonly shapeOf?: (value: string) => SymShape | undefined;
}

/**
 * Replaces score → [mask] → softmax → [dropout] → weighted-sum with one `attention` step when nothing outside the chain
 * needs its middle: each intermediate has exactly one reader, is no output, is not watched by a tap and is not pinned
 * to an executor. The fused step keeps the weighted-sum's name, so everything downstream is unchanged. A chain stays
 * unfused when no executor has an attention kernel for its attributes (each executor falls back to the unfused steps).
 */
export function fuseAttention(
  steps: readonly DraftStep[],
  ctx: FusionContext,
): { steps: DraftStep[]; report: PassReport } {
  const byNode = new Map(steps.map((s) => [s.node, s] as const));
  const readers = consumerCounts(steps);
  const outputs = new Set(ctx.outputs);
  const replaced = new Map<string, DraftStep>(); // weighted-sum node → fused step
  const dropped = new Set<string>();
  const log = new FusionLog();
  const { done, kept } = log;

  for (const ws of steps) {
    if (ws.kind !== "weighted-sum" || ws.fused !== undefined) continue;
    const chain = matchAttentionChain(ws, byNode, (value) => byNode.get(value)?.shape ?? ctx.shapeOf?.(value));
    if (chain === undefined) continue;
    if (typeof chain === "string") {
      kept.push(`${ws.node} (${chain})`);
      continue;
    }
    const names = [...chain.middle.map((s) => s.node), ws.node];
    const blocker = chain.middle.find(
      (s) => readers.get(s.node) !== 1 || outputs.has(s.node) || ctx.watched.has(s.node),
    );
    if (blocker) {
      kept.push(
        `${ws.node} (${blocker.node} is ${ctx.watched.has(blocker.node) ? watchedAs(ctx.patched, blocker.node) : outputs.has(blocker.node) ? "an output" : "read elsewhere"})`,
      );
      continue;
    }
    const pinned = names.find((n) => ctx.overrides.has(n));
    if (pinned) {
      kept.push(`${ws.node} (${pinned} is placed by the user)`);
      continue;
    }
    const attrs = chain.attrs;
    if (!anySupports(ctx.executors, "attention", attrs)) {
      kept.push(`${ws.node} (no executor has an attention kernel)`);
      continue;
    }
    replaced.set(ws.node, fusedInPlaceOf(ws, "attention", attrs, chain.inputs, names));
    for (const s of chain.middle) dropped.add(s.node);
    done.push(`${names.join(" + ")} → attention${describeMods(attrs)}`);
  }

  const out = steps.filter((s) => !dropped.has(s.node)).map((s) => replaced.get(s.node) ?? s);
  const summary = log.summary();
  return { steps: out, report: { pass: "fusion", summary } };
}
