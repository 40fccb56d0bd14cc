// The fused attention backward (FlashAttention style). grad() differentiates score → [mask] → softmax → [dropout] →
// weighted-sum by the rules of its parts, which read the forward's [L, S] weights and masked scores and make four more
// [L, S] values (the weights', probabilities', masked and raw scores' gradients). Where nothing watches any of them,
// this pass puts in their place:
//   - the forward chain → one `attention` step (as the forward fusion does; it keeps the weighted-sum's name),
//   - `<weighted-sum>.lse` = attention-lse(q, k, padding): one number per query row, all the backward keeps,
//   - each of dq, dk, dv → attention-grad(q, k, v, out, grad, lse, padding) with wrt "q", "k" or "v", keeping the node's
//     name; the key and value gradients' head-group sums (grouped-query attention) happen inside the kernel.
// So a training step never holds an [L, S] value for that attention. The rule is the forward fusion's: any of those
// values tapped, an output, read by anything else or placed by the user keeps the whole chain (forward and backward)
// unfused, and explain() says which and why. The subgraph must be exactly what the built-in rules make (their node
// kinds, wiring and attributes); anything else (a user's own rule, a second reader) is left alone.
import { scoreModGradStep, type AttentionGradWrt, type ScoreModAttrs } from "@attngraph/graph";
import type { PassReport } from "../plan.js";
import type { BlockFusionContext } from "./fusion-block.js";
import { describeMods, matchAttentionChain, type AttentionChain } from "./attention-chain.js";
import { watchedAs, type DraftStep } from "./draft.js";
import { anySupports, FusionLog, fusedInPlaceOf } from "./fusion-log.js";

export type BackwardFusionContext = BlockFusionContext;

type Wrt = AttentionGradWrt;

/** The chain's backward as the rules build it; every field a step of the draft. */
interface Backward {
  /** The context's gradient (grad of the weighted-sum's output). */
  readonly gradOut: string;
  /**
   * Steps that become unnecessary, with the gradient they served: every [L, S] value (the score's and weights'
   * gradients serve dq and dk together) and the per-query-head products before a head-group sum.
   */
  readonly removed: readonly { readonly step: DraftStep; readonly serves: Wrt }[];
  /** The steps whose values are dq, dk, dv (kept by name, recomputed by attention-grad), in that order. */
  readonly ends: readonly (readonly [Wrt, DraftStep])[];
}

const SWAP_LAST = [0, 1, 3, 2];

export function fuseAttentionBackward(
  steps: readonly DraftStep[],
  ctx: BackwardFusionContext,
): { steps: DraftStep[]; report: PassReport | undefined } {
  const byNode = new Map(steps.map((s) => [s.node, s] as const));
  const readers = readersOf(steps);
  const outputs = new Set(ctx.outputs);
  const replaced = new Map<string, DraftStep[]>();
  const dropped = new Set<string>();
  const log = new FusionLog();
  const { done, kept } = log;

  for (const ws of steps) {
    if (ws.kind !== "weighted-sum" || ws.fused !== undefined) continue;
    const chain = matchAttentionChain(
      ws,
      byNode,
      (value) => byNode.get(value)?.shape ?? (ctx.graph.has(value) ? ctx.graph.shapeOf(value) : undefined),
    );
    if (chain === undefined || typeof chain === "string") continue; // the forward pass says why
    const bw = matchBackward(chain, byNode, readers, (value) => byNode.get(value)?.shape ?? ctx.graph.shapeOf(value));
    if (bw === undefined) continue; // no backward reads this chain: the forward pass's business
    if (typeof bw === "string") {
      kept.push(`${ws.node} (${bw})`);
      continue;
    }
    const names = [...chain.middle, ...bw.removed.map((r) => r.step)].map((s) => s.node);
    const blocker = names.find((n) => outputs.has(n) || ctx.watched.has(n) || ctx.overrides.has(n));
    if (blocker) {
      kept.push(
        `${ws.node} (${blocker} is ${ctx.watched.has(blocker) ? watchedAs(ctx.patched, blocker) : outputs.has(blocker) ? "an output" : "placed by the user"})`,
      );
      continue;
    }
    // attention-grad reads the forward's output (δ = grad · out): an override of it would change the gradients, which
    // the rules compute from the weights alone.
    if (ctx.patched?.has(ws.node)) {
      kept.push(`${ws.node} (${ws.node} is patched: the fused backward would read the override)`);
      continue;
    }
    const pinned = [ws.node, ...bw.ends.map(([, s]) => s.node)].find((n) => ctx.overrides.has(n));
    if (pinned) {
      kept.push(`${ws.node} (${pinned} is placed by the user)`);
      continue;
    }
    const lseName = `${ws.node}.lse`;
    if (ctx.graph.has(lseName) || byNode.has(lseName)) {
      kept.push(`${ws.node} (a value is already named ${lseName})`);
      continue;
    }
    const a = chain.attrs;
    const mods =
      a.scoreMod !== undefined || a.maskMod !== undefined
        ? { scoreMod: a.scoreMod ?? null, maskMod: a.maskMod ?? null, inputs: a.inputs ?? [] }
        : {};
    const lseAttrs = { causal: a.causal, window: a.window, alignment: a.alignment, scale: a.scale, ...mods };
    const missing = [
      ["attention", a],
      ["attention-lse", lseAttrs],
      ...bw.ends.map(([wrt]) => ["attention-grad", { ...a, wrt }] as const),
    ].find(([kind, attrs]) => !anySupports(ctx.executors, kind as string, attrs as Record<string, unknown>));
    if (missing) {
      kept.push(`${ws.node} (no executor has an ${missing[0]} kernel)`);
      continue;
    }
    const [q, k, v, pad, ...gathered] = chain.inputs;
    const forward = fusedInPlaceOf(ws, "attention", a, chain.inputs, [...chain.middle.map((s) => s.node), ws.node]);
    const lse: DraftStep = {
      node: lseName,
      kind: "attention-lse",
      attrs: lseAttrs,
      inputs: [q, k, pad, ...gathered],
      shape: ws.shape.slice(0, 3),
      fused: [],
    };
    replaced.set(ws.node, [forward, lse]);
    for (const [wrt, end] of bw.ends) {
      const fused = [...bw.removed.filter((r) => r.serves === wrt).map((r) => r.step.node), end.node];
      const inputs = [q, k, v, ws.node, bw.gradOut, lseName, pad, ...gathered];
      replaced.set(end.node, [fusedInPlaceOf(end, "attention-grad", { ...a, wrt }, inputs, fused)]);
    }
    for (const n of names) dropped.add(n);
    done.push(
      `${ws.node}: forward → attention${describeMods(a)} + ${lseName}; ${bw.ends.map(([wrt, s]) => `${s.node} → attention-grad (${wrt})`).join(", ")}`,
    );
  }

  if (!done.length && !kept.length) return { steps: [...steps], report: undefined };
  const out = steps
    .filter((s) => !dropped.has(s.node) || replaced.has(s.node))
    .flatMap((s) => replaced.get(s.node) ?? [s]);
  const summary = log.summary();
  return { steps: out, report: { pass: "attention backward fusion", summary } };
}

/** Every step reading each value, once per slot. */
function readersOf(steps: readonly DraftStep[]): Map<string, DraftStep[]> {
  const out = new Map<string, DraftStep[]>();
  for (const s of steps) for (const v of s.inputs) if (v !== undefined) out.set(v, [...(out.get(v) ?? []), s]);
  return out;
}

/**
 * The backward the built-in rules make for `chain`, or why it is not that, or undefined when nothing but the forward
 * reads the chain. Every [L, S] value must have exactly the readers the rules give it.
 */
function matchBackward(
  chain: AttentionChain,
  byNode: ReadonlyMap<string, DraftStep>,
  readers: ReadonlyMap<string, DraftStep[]>,
  shapeOf: (value: string) => DraftStep["shape"],
): Backward | string | undefined {
  const { score, scoreMod, softmax: probs, dropout, weightedSum: ws } = chain;
  const weights = dropout ?? probs;
  const [q, k, v] = chain.inputs as [string, string, string];
  const readersOfStep = (s: DraftStep): DraftStep[] => readers.get(s.node) ?? [];
  const only = (s: DraftStep): DraftStep | undefined => {
    const r = readersOfStep(s);
    return r.length === 1 ? r[0] : undefined;
  };
  const is = (s: DraftStep | undefined, kind: string): s is DraftStep =>
    s !== undefined && s.kind === kind && s.fused === undefined;
  const swapsLast = (s: DraftStep | undefined, of: DraftStep): s is DraftStep =>
    is(s, "transpose") && s.inputs[0] === of.node && JSON.stringify(s.attrs.perm) === JSON.stringify(SWAP_LAST);

  // The forward from the scores up to the probabilities: score, [score-mod], the masks (as the chain reads them).
  const masks = chain.middle.filter((s) => s.kind === "mask" || s.kind === "mask-mod"); // bottom-up
  const below = [score, ...(scoreMod ? [scoreMod] : []), ...masks];
  // The rules' readers of the forward's middle: a transpose of the weights (for dv), the softmax's gradient (reads the
  // probabilities), each mask's (reads its masked scores), and with a score modification its gradient (which may
  // read the raw scores) and the gradients of its learnable gathered inputs (read the raw scores).
  const wT = readersOfStep(weights).find((r) => swapsLast(r, weights));
  const dMasked = readersOfStep(probs).find((r) => is(r, "softmax-grad") && r.inputs[0] === probs.node);
  if (!wT && !dMasked) return undefined;
  // The rules' gradient of a mask (and of ALiBi, whose rule is a mask-grad with its scale): a mask-grad of its output.
  const alibi = scoreMod?.kind === "alibi" ? scoreMod : undefined;
  const maskGrads = new Map(
    [...masks, ...(alibi ? [alibi] : [])].map(
      (m) => [m, readersOfStep(m).find((r) => is(r, "mask-grad") && r.inputs[1] === m.node)] as const,
    ),
  );
  const scoreReaders = readersOfStep(score).filter(
    (r) => (is(r, "score-mod") || is(r, "score-mod-input-grad")) && r !== scoreMod,
  );
  const allowed: [DraftStep, (DraftStep | undefined)[]][] = [
    ...below.map((s, n): [DraftStep, (DraftStep | undefined)[]] => [
      s,
      [
        below[n + 1] ?? probs,
        ...(maskGrads.get(s) ? [maskGrads.get(s)] : []),
        ...(s === score && scoreMod ? scoreReaders : []),
      ],
    ]),
    [probs, [dropout ?? ws, dMasked, ...(dropout ? [] : [wT])]],
    ...(dropout ? [[dropout, [ws, wT]] as [DraftStep, (DraftStep | undefined)[]]] : []),
  ];
  for (const [value, ok] of allowed) {
    const stranger = readersOfStep(value).find((r) => !ok.includes(r));
    if (stranger)
      return `${value.node} is read by ${stranger.node} (op ${stranger.kind}), not only by the chain and its backward`;
  }

  const removed: { step: DraftStep; serves: Wrt }[] = [];
  const ends: [Wrt, DraftStep][] = [];
  const grouped = ws.shape[1] !== shapeOf(v)[1];
  /** A per-query-head product and, with grouped heads, the reshape → sum-to → reshape that sums each group. */
  const headGroupEnd = (product: DraftStep, serves: Wrt): DraftStep | string => {
    if (!grouped) return product;
    const split = only(product);
    const sum = split && only(split);
    const merge = sum && only(sum);
    if (!is(split, "reshape") || !is(sum, "sum-to") || !is(merge, "reshape"))
      return `${product.node} is not summed over head groups the way the rules do`;
    removed.push({ step: product, serves }, { step: split, serves }, { step: sum, serves });
    return merge;
  };

  let gradOut: string | undefined;
  if (wT) {
    const dvHeads = only(wT);
    if (!is(dvHeads, "weighted-sum") || dvHeads.inputs[0] !== wT.node)
      return `${wT.node} is not read by the value gradient's weighted-sum alone`;
    gradOut = dvHeads.inputs[1];
    removed.push({ step: wT, serves: "v" });
    const end = headGroupEnd(dvHeads, "v");
    if (typeof end === "string") return end;
    ends.push(["v", end]);
  }
  if (dMasked) {
    if (dMasked.attrs.scale !== probs.attrs.scale) return `${dMasked.node} has another scale than ${probs.node}`;
    // softmax-grad ← [dropout of] the weights' gradient, a score of the context's gradient and v.
    const dProbs = dMasked.inputs[1] === undefined ? undefined : byNode.get(dMasked.inputs[1]);
    if (dropout && !(is(dProbs, "dropout") && JSON.stringify(dProbs.attrs) === JSON.stringify(dropout.attrs)))
      return `${dMasked.node} does not read the weights' gradient through ${dropout.node}'s dropout`;
    const dWeights = dropout ? (dProbs!.inputs[0] === undefined ? undefined : byNode.get(dProbs!.inputs[0])) : dProbs;
    if (!is(dWeights, "score") || dWeights.inputs[1] !== v)
      return `${dMasked.node} does not come from the gradient of ${weights.node} (a score of the context's gradient and ${v})`;
    if (gradOut !== undefined && dWeights.inputs[0] !== gradOut)
      return `the value and weights gradients of ${ws.node} start from different gradients`;
    gradOut = dWeights.inputs[0];
    const path = [dWeights, ...(dropout ? [dProbs!] : []), dMasked];
    // Each mask's gradient, the one nearest the softmax first.
    for (const m of [...masks].reverse()) {
      const mg = maskGrads.get(m);
      if (
        !is(mg, "mask-grad") ||
        mg.inputs[0] !== path[path.length - 1]!.node ||
        (mg.attrs.scale ?? 1) !== ((m.attrs.scale as number | undefined) ?? 1)
      )
        return `${path[path.length - 1]!.node} is not read by ${m.node}'s gradient`;
      path.push(mg);
    }
    if (alibi) {
      const mg = maskGrads.get(alibi);
      if (!is(mg, "mask-grad") || mg.inputs[0] !== path[path.length - 1]!.node || mg.attrs.scale !== alibi.attrs.scale)
        return `${path[path.length - 1]!.node} is not read by ${alibi.node}'s gradient`;
      path.push(mg);
    }
    // The score modification's gradient as its rule makes it: nothing (the identity), a score-mod of the gradient
    // alone (a constant derivative), or a score-mod of the raw scores gathering the gradient; and one
    // score-mod-input-grad per learnable gathered input, each reading the gradient of the modified scores.
    const inputGrads: [Wrt, DraftStep][] = [];
    if (scoreMod && !alibi) {
      const gMod = path[path.length - 1]!;
      const modReaders = readersOfStep(gMod);
      for (const r of modReaders.filter((r) => is(r, "score-mod-input-grad"))) {
        const own = scoreMod.attrs.inputs as readonly string[];
        const at = own.indexOf(r.attrs.wrt as string);
        const sameGathered = own.every((_, i) => r.inputs[2 + i] === scoreMod.inputs[1 + i]);
        if (
          r.inputs[0] !== score.node ||
          r.inputs[1] !== gMod.node ||
          at < 0 ||
          !sameGathered ||
          JSON.stringify(r.attrs.expr) !== JSON.stringify(scoreMod.attrs.expr)
        ) {
          return `${r.node} is not the gradient of ${scoreMod.node}'s input the rules make`;
        }
        inputGrads.push([`g${chain.scoreModSlots[at]!}` as Wrt, r]);
      }
      // The x-gradient step must be exactly the one score-mod's rule makes (scoreModGradStep): its wiring and attributes.
      const grads = modReaders.filter((r) => is(r, "score-mod"));
      if (grads.length > 1) return `${gMod.node} is read by more than one score modification`;
      const g = grads[0];
      const want = scoreModGradStep(scoreMod.attrs as unknown as ScoreModAttrs);
      if (want !== "identity" && typeof want === "string") return `${scoreMod.node}: ${want}`;
      if (g) {
        const own = scoreMod.attrs.inputs as readonly string[];
        const wired =
          typeof want !== "string" &&
          (want.gathersGrad
            ? g.inputs[0] === score.node &&
              g.inputs[1 + own.length] === gMod.node &&
              own.every((_, i) => g.inputs[1 + i] === scoreMod.inputs[1 + i])
            : g.inputs[0] === gMod.node);
        if (!wired || typeof want === "string" || JSON.stringify(g.attrs) !== JSON.stringify(want.attrs))
          return `${g.node} is not the gradient of ${scoreMod.node} the rules make`;
        path.push(g);
      }
    }
    for (let n = 0; n + 1 < path.length; n++) {
      const stranger = readersOfStep(path[n]!).find((r) => r !== path[n + 1] && !inputGrads.some(([, s]) => s === r));
      if (stranger)
        return `${path[n]!.node} is read by ${stranger.node} (op ${stranger.kind}), not only by the chain and its backward`;
    }
    const dScores = path[path.length - 1]!;
    const scoreGrads: { step: DraftStep; serves: Wrt }[] = path.map((step) => ({ step, serves: "q" }));
    ends.push(...inputGrads);
    for (const r of readersOfStep(dScores)) {
      if (inputGrads.some(([, s]) => s === r)) continue;
      if (
        is(r, "weighted-sum") &&
        r.inputs[0] === dScores.node &&
        r.inputs[1] === k &&
        !ends.some(([w]) => w === "q")
      ) {
        ends.push(["q", r]);
      } else if (swapsLast(r, dScores) && !ends.some(([w]) => w === "k")) {
        const dkHeads = only(r);
        if (!is(dkHeads, "weighted-sum") || dkHeads.inputs[0] !== r.node || dkHeads.inputs[1] !== q)
          return `${r.node} is not read by the key gradient's weighted-sum alone`;
        removed.push({ step: r, serves: "k" });
        const end = headGroupEnd(dkHeads, "k");
        if (typeof end === "string") return end;
        ends.push(["k", end]);
      } else {
        return `${dScores.node} is read by ${r.node} (op ${r.kind}), not only by the query and key gradients`;
      }
    }
    // The scores' gradients serve dq and dk together: explain lists them under dq, or dk when dq is not needed.
    const serves: Wrt = ends.some(([w]) => w === "q")
      ? "q"
      : ends.some(([w]) => w === "k")
        ? "k"
        : (ends[0]?.[0] ?? "q");
    removed.push(...scoreGrads.map((r) => ({ ...r, serves })));
  }
  if (gradOut === undefined) return `${ws.node}'s backward has no gradient of its output`;
  const order = (w: Wrt) => (w.length === 1 ? "qkv".indexOf(w) : 3 + Number(w.slice(1)));
  ends.sort((a, b) => order(a[0]) - order(b[0]));
  return { gradOut, removed, ends };
}
