// What the attention fusions (forward, fusion.ts; forward and backward, fusion-backward.ts) recognise: the chain
// score → [mask] → softmax → [dropout] → weighted-sum, read backwards from its weighted-sum, and the fused attention's
// attributes it stands for. Whether anything outside the chain needs its middle is each pass's own question.
import type { DraftStep } from "./draft.js";

export interface AttentionChain {
  readonly score: DraftStep;
  readonly mask: DraftStep | undefined;
  readonly softmax: DraftStep;
  readonly dropout: DraftStep | undefined;
  readonly weightedSum: DraftStep;
  /** score, [mask], softmax, [dropout]: the steps a fusion removes. */
  readonly middle: readonly DraftStep[];
  /** The fused `attention` step's attributes. */
  readonly attrs: Readonly<Record<string, unknown>>;
  /** The fused step's inputs: q, k, v, keyPaddingMask. */
  readonly inputs: readonly (string | undefined)[];
}

/**
 * The chain ending in weighted-sum `ws`, or why there is none: undefined when `ws` does not read a softmax (nothing to
 * say), a reason when it does but no fused kernel covers the chain (a node other than a score under the mask, a user
 * mask, a bias or a mask scale).
 */
export function matchAttentionChain(ws: DraftStep, byNode: ReadonlyMap<string, DraftStep>): AttentionChain | string | undefined {
  const take = (value: string | undefined, kind: string): DraftStep | undefined => {
    const s = value === undefined ? undefined : byNode.get(value);
    return s?.kind === kind && s.fused === undefined ? s : undefined;
  };
  const dropout = take(ws.inputs[0], "dropout");
  const softmax = take(dropout ? dropout.inputs[0] : ws.inputs[0], "softmax");
  if (!softmax) return undefined;
  const mask = take(softmax.inputs[0], "mask");
  const scoreInput = mask ? mask.inputs[0] : softmax.inputs[0];
  const score = take(scoreInput, "score");
  if (!score) {
    const other = scoreInput === undefined ? undefined : byNode.get(scoreInput);
    return `${(mask ?? softmax).node} reads ${other ? `${other.node} (op ${other.kind})` : scoreInput}, not a score: no fused kernel covers that`;
  }
  // The fused kernels take the positional mask and key padding only; a user mask, a bias or a mask scale (inputs 2 and
  // 3, attribute scale) keeps the chain.
  if (mask && (mask.inputs[2] !== undefined || mask.inputs[3] !== undefined || (mask.attrs.scale ?? 1) !== 1)) {
    const what = [mask.inputs[2] !== undefined ? "a user mask" : "", mask.inputs[3] !== undefined ? "a bias" : "", (mask.attrs.scale ?? 1) !== 1 ? "a scale" : ""].filter(Boolean).join(" and ");
    return `${mask.node} has ${what}: the fused attention kernels take causal, window and key padding only`;
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
  const middle = [score, ...(mask ? [mask] : []), softmax, ...(dropout ? [dropout] : [])];
  return { score, mask, softmax, dropout, weightedSum: ws, middle, attrs, inputs: [score.inputs[0], score.inputs[1], ws.inputs[1], mask?.inputs[1]] };
}
