import type { Executor } from "@attngraph/graph";
import type { PassReport } from "../plan.js";
import { consumerCounts, type DraftStep } from "./draft.js";

export interface FusionContext {
  readonly outputs: readonly string[];
  readonly watched: ReadonlySet<string>;
  readonly executors: readonly Executor[];
  readonly overrides: ReadonlyMap<string, string>;
}

/**
 * Replaces score → [mask] → softmax → [dropout] → weighted-sum with one `attention` step when nothing outside the chain
 * needs its middle: each intermediate has exactly one reader, is no output, is not watched by a tap and is not pinned
 * to an executor. The fused step keeps the weighted-sum's name, so everything downstream is unchanged. A chain stays
 * unfused when no executor has an attention kernel for its attributes (each executor falls back to the unfused steps).
 */
export function fuseAttention(steps: readonly DraftStep[], ctx: FusionContext): { steps: DraftStep[]; report: PassReport } {
  const byNode = new Map(steps.map((s) => [s.node, s] as const));
  const readers = consumerCounts(steps);
  const outputs = new Set(ctx.outputs);
  const replaced = new Map<string, DraftStep>(); // weighted-sum node → fused step
  const dropped = new Set<string>();
  const done: string[] = [];
  const kept: string[] = [];

  for (const ws of steps) {
    if (ws.kind !== "weighted-sum") continue;
    const chain: DraftStep[] = [];
    const take = (value: string | undefined, kind: string): DraftStep | undefined => {
      const s = value === undefined ? undefined : byNode.get(value);
      return s?.kind === kind ? s : undefined;
    };
    const dropout = take(ws.inputs[0], "dropout");
    const softmax = take(dropout ? dropout.inputs[0] : ws.inputs[0], "softmax");
    if (!softmax) continue;
    const mask = take(softmax.inputs[0], "mask");
    const scoreInput = mask ? mask.inputs[0] : softmax.inputs[0];
    const score = take(scoreInput, "score");
    if (!score) {
      const other = scoreInput === undefined ? undefined : byNode.get(scoreInput);
      kept.push(`${ws.node} (${(mask ?? softmax).node} reads ${other ? `${other.node} (op ${other.kind})` : scoreInput}, not a score: no fused kernel covers that)`);
      continue;
    }
    chain.push(score, ...(mask ? [mask] : []), softmax, ...(dropout ? [dropout] : []));
    const names = [...chain.map((s) => s.node), ws.node];
    const blocker = chain.find((s) => readers.get(s.node) !== 1 || outputs.has(s.node) || ctx.watched.has(s.node));
    if (blocker) {
      kept.push(`${ws.node} (${blocker.node} is ${ctx.watched.has(blocker.node) ? "tapped" : outputs.has(blocker.node) ? "an output" : "read elsewhere"})`);
      continue;
    }
    // The fused kernels take the positional mask and key padding only; a user mask, a bias or a mask scale (inputs 2 and
    // 3, attribute scale) keeps the chain, and explain() says so.
    if (mask && (mask.inputs[2] !== undefined || mask.inputs[3] !== undefined || (mask.attrs.scale ?? 1) !== 1)) {
      const what = [mask.inputs[2] !== undefined ? "a user mask" : "", mask.inputs[3] !== undefined ? "a bias" : "", (mask.attrs.scale ?? 1) !== 1 ? "a scale" : ""].filter(Boolean).join(" and ");
      kept.push(`${ws.node} (${mask.node} has ${what}: the fused attention kernels take causal, window and key padding only)`);
      continue;
    }
    const pinned = names.find((n) => ctx.overrides.has(n));
    if (pinned) {
      kept.push(`${ws.node} (${pinned} is placed by the user)`);
      continue;
    }
    const attrs = {
      causal: mask?.attrs.causal ?? false,
      window: mask?.attrs.window ?? null,
      alignment: mask?.attrs.alignment ?? "top-left",
      scale: softmax.attrs.scale,
      dropoutRate: dropout?.attrs.rate ?? 0,
      dropoutSeed: dropout?.attrs.seed ?? 0,
      training: dropout?.attrs.training ?? false,
    };
    if (!ctx.executors.some((e) => e.supports("attention", attrs).ok)) {
      kept.push(`${ws.node} (no executor has an attention kernel)`);
      continue;
    }
    replaced.set(ws.node, {
      node: ws.node,
      kind: "attention",
      attrs,
      inputs: [score.inputs[0], score.inputs[1], ws.inputs[1], mask?.inputs[1]],
      shape: ws.shape,
      fused: names,
    });
    for (const s of chain) dropped.add(s.node);
    done.push(`${names.join(" + ")} → attention`);
  }

  const out = steps.filter((s) => !dropped.has(s.node)).map((s) => replaced.get(s.node) ?? s);
  const summary = [done.length ? `fused ${done.join("; ")}` : "nothing fused", ...(kept.length ? [`kept unfused: ${kept.join("; ")}`] : [])].join("; ");
  return { steps: out, report: { pass: "fusion", summary } };
}
