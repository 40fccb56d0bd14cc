// What the attention fusions (forward, fusion.ts; forward and backward, fusion-backward.ts) recognise: the chain
// score → [score-mod] → [mask-mod] [mask] → softmax → [dropout] → weighted-sum, read backwards from its weighted-sum,
// and the fused attention's attributes it stands for (the modifications as expressions, their gathered inputs in the
// fused step's slots). Whether anything outside the chain needs its middle is each pass's own question.
import { formatExpr, MAX_GATHERED, renameReads, type Expr } from "@attngraph/graph";
import type { DraftStep } from "./draft.js";

export interface AttentionChain {
  readonly score: DraftStep;
  readonly scoreMod: DraftStep | undefined;
  readonly maskMod: DraftStep | undefined;
  readonly mask: DraftStep | undefined;
  readonly softmax: DraftStep;
  readonly dropout: DraftStep | undefined;
  readonly weightedSum: DraftStep;
  /** score, [score-mod], [mask-mod], [mask], softmax, [dropout]: the steps a fusion removes. */
  readonly middle: readonly DraftStep[];
  /** The fused `attention` step's attributes. */
  readonly attrs: Readonly<Record<string, unknown>>;
  /** The fused step's inputs: q, k, v, keyPaddingMask, then the gathered slots g0, g1, … */
  readonly inputs: readonly (string | undefined)[];
  /** The fused step's gathered input in each slot of the score-mod's (and mask-mod's) own slots: slot i → fused slot. */
  readonly scoreModSlots: readonly number[];
  readonly maskModSlots: readonly number[];
}

/**
 * The chain ending in weighted-sum `ws`, or why there is none: undefined when `ws` does not read a softmax (nothing to
 * say), a reason when it does but no fused kernel covers the chain (a node other than a score under the mask, a user
 * mask, a bias or a mask scale, a score modification after a mask).
 */
export function matchAttentionChain(ws: DraftStep, byNode: ReadonlyMap<string, DraftStep>): AttentionChain | string | undefined {
  const take = (value: string | undefined, kind: string): DraftStep | undefined => {
    const s = value === undefined ? undefined : byNode.get(value);
    return s?.kind === kind && s.fused === undefined ? s : undefined;
  };
  const dropout = take(ws.inputs[0], "dropout");
  const softmax = take(dropout ? dropout.inputs[0] : ws.inputs[0], "softmax");
  if (!softmax) return undefined;
  // The masks, in either order (each hides with −∞; "and" of what they keep commutes).
  let mask: DraftStep | undefined;
  let maskMod: DraftStep | undefined;
  let below = softmax.inputs[0];
  for (let n = 0; n < 2; n++) {
    const m = mask ? undefined : take(below, "mask");
    const mm = maskMod || m ? undefined : take(below, "mask-mod");
    if (!m && !mm) break;
    if (m) mask = m;
    if (mm) maskMod = mm;
    below = (m ?? mm)!.inputs[0];
  }
  const scoreMod = take(below, "score-mod");
  const scoreInput = scoreMod ? scoreMod.inputs[0] : below;
  const score = take(scoreInput, "score");
  if (!score) {
    const other = scoreInput === undefined ? undefined : byNode.get(scoreInput);
    const reader = scoreMod ?? maskMod ?? mask ?? softmax;
    if (other?.kind === "score-mod" || other?.kind === "mask-mod" || other?.kind === "mask") {
      return `${reader.node} reads ${other.node} (op ${other.kind}): the fused kernels take one score modification, then the masks`;
    }
    return `${reader.node} reads ${other ? `${other.node} (op ${other.kind})` : scoreInput}, not a score: no fused kernel covers that`;
  }
  // The fused kernels take the positional mask and key padding; a user mask, a bias or a mask scale (inputs 2 and 3,
  // attribute scale) keeps the chain.
  if (mask && (mask.inputs[2] !== undefined || mask.inputs[3] !== undefined || (mask.attrs.scale ?? 1) !== 1)) {
    const what = [mask.inputs[2] !== undefined ? "a user mask" : "", mask.inputs[3] !== undefined ? "a bias" : "", (mask.attrs.scale ?? 1) !== 1 ? "a scale" : ""].filter(Boolean).join(" and ");
    return `${mask.node} has ${what}: the fused attention kernels take causal, window and key padding only`;
  }
  // With a score modification the scale is the score-mod's (its `score` is the scaled score): the softmax must add none.
  if (scoreMod && softmax.attrs.scale !== 1) return `${softmax.node} scales what ${scoreMod.node} modified (scale ${softmax.attrs.scale}): the fused kernels scale before the modification only`;
  const middle = [score, ...(scoreMod ? [scoreMod] : []), ...[maskMod, mask].filter((s): s is DraftStep => s !== undefined), softmax, ...(dropout ? [dropout] : [])];
  const gathered = mergeGathered([scoreMod, maskMod], new Set(middle.map((s) => s.node)));
  if (typeof gathered === "string") return gathered;
  const attrs = {
    causal: mask?.attrs.causal ?? false,
    window: mask?.attrs.window ?? null,
    alignment: mask?.attrs.alignment ?? "top-left",
    scale: scoreMod ? scoreMod.attrs.scale : softmax.attrs.scale,
    dropoutRate: dropout?.attrs.rate ?? 0,
    dropoutSeed: dropout?.attrs.seed ?? 0,
    training: dropout?.attrs.training ?? false,
    ...(scoreMod || maskMod ? { scoreMod: gathered.exprs[0] ?? null, maskMod: gathered.exprs[1] ?? null, inputs: gathered.names } : {}),
  };
  return {
    score,
    scoreMod,
    maskMod,
    mask,
    softmax,
    dropout,
    weightedSum: ws,
    middle,
    attrs,
    inputs: [score.inputs[0], score.inputs[1], ws.inputs[1], mask?.inputs[1], ...gathered.values],
    scoreModSlots: gathered.slots[0] ?? [],
    maskModSlots: gathered.slots[1] ?? [],
  };
}

interface Merged {
  /** Each step's expression with its reads renamed to the fused step's names (undefined where there is no step). */
  readonly exprs: (Expr | undefined)[];
  readonly names: string[];
  readonly values: string[];
  /** For each step, its slot i → the fused step's slot. */
  readonly slots: number[][];
}

/**
 * One list of gathered inputs for the fused step from the modifications' own: a tensor both read takes one slot (under
 * the first name it had), a name both use for different tensors gets a fresh name in the second. A gathered input that
 * is a value of the chain itself (the scores, read at other positions) cannot be fused: nothing computes it any more.
 */
function mergeGathered(steps: readonly (DraftStep | undefined)[], middle: ReadonlySet<string>): Merged | string {
  const names: string[] = [];
  const values: string[] = [];
  const exprs: (Expr | undefined)[] = [];
  const slots: number[][] = [];
  for (const step of steps) {
    if (!step) {
      exprs.push(undefined);
      slots.push([]);
      continue;
    }
    const own = step.attrs.inputs as readonly string[];
    const renames = new Map<string, string>();
    const mine: number[] = [];
    for (let i = 0; i < own.length; i++) {
      const value = step.inputs[1 + i]!;
      if (middle.has(value)) return `${step.node} gathers from ${value}, a value inside the attention chain: a fused kernel never holds it`;
      let at = values.indexOf(value);
      if (at < 0) {
        let name = own[i]!;
        for (let n = 1; names.includes(name); n++) name = `${own[i]}_${n}`;
        names.push(name);
        values.push(value);
        at = values.length - 1;
      }
      if (names[at] !== own[i]) renames.set(own[i]!, names[at]!);
      mine.push(at);
    }
    if (values.length > MAX_GATHERED) return `${step.node}: the modifications gather from ${values.length} tensors, the fused kernels take at most ${MAX_GATHERED}`;
    exprs.push(renameReads(step.attrs.expr as Expr, renames));
    slots.push(mine);
  }
  return { exprs, names, values, slots };
}

/** The fused step's modifications for explain(): " [score-mod: …; mask-mod: …]", or "" without any. */
export function describeMods(attrs: Readonly<Record<string, unknown>>): string {
  const parts = [
    attrs.scoreMod ? `score-mod: ${formatExpr(attrs.scoreMod as Expr)}` : "",
    attrs.maskMod ? `mask-mod: ${formatExpr(attrs.maskMod as Expr)}` : "",
  ].filter(Boolean);
  return parts.length ? ` [${parts.join("; ")}]` : "";
}
