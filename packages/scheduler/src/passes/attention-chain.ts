// What the attention fusions (forward, fusion.ts; forward and backward, fusion-backward.ts) recognise: the chain
// score → [score-mod] → [mask-mod] [mask] → softmax → [dropout] → weighted-sum, read backwards from its weighted-sum,
// and the fused attention's attributes it stands for (the modifications as expressions, their gathered inputs in the
// fused step's slots). Whether anything outside the chain needs its middle is each pass's own question.
import { formatExpr, MAX_GATHERED, renameReads, type Expr, type SymShape } from "@attngraph/graph";
import { alibiPart, biasPart, times, userMaskPart, type ModPart } from "./builtin-mods.js";
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
  /** The fused step's slot of each of the score-mod's own gathered inputs: slot i → fused slot. */
  readonly scoreModSlots: readonly number[];
}

/**
 * The chain ending in weighted-sum `ws`, or why there is none: undefined when `ws` does not read a softmax (nothing to
 * say), a reason when it does but no fused kernel covers the chain (a node other than a score under the mask, a user
 * mask, a bias or a mask scale, a score modification after a mask).
 */
export function matchAttentionChain(
  ws: DraftStep,
  byNode: ReadonlyMap<string, DraftStep>,
  shapeOf: (value: string) => SymShape | undefined = () => undefined,
): AttentionChain | string | undefined {
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
  const masks: DraftStep[] = []; // nearest the softmax first
  for (let n = 0; n < 2; n++) {
    const m = mask ? undefined : take(below, "mask");
    const mm = maskMod || m ? undefined : take(below, "mask-mod");
    if (!m && !mm) break;
    if (m) mask = m;
    if (mm) maskMod = mm;
    masks.push((m ?? mm)!);
    below = (m ?? mm)!.inputs[0];
  }
  // One score modification: a user's score-mod or the built-in ALiBi.
  const scoreMod = take(below, "score-mod") ?? take(below, "alibi");
  const scoreInput = scoreMod ? scoreMod.inputs[0] : below;
  const score = take(scoreInput, "score");
  if (!score) {
    const other = scoreInput === undefined ? undefined : byNode.get(scoreInput);
    const reader = scoreMod ?? masks[masks.length - 1] ?? softmax;
    if (
      other?.kind === "score-mod" ||
      other?.kind === "mask-mod" ||
      other?.kind === "mask" ||
      other?.kind === "alibi"
    ) {
      return `${reader.node} reads ${other.node} (op ${other.kind}): the fused kernels take one score modification, then the masks`;
    }
    return `${reader.node} reads ${other ? `${other.node} (op ${other.kind})` : scoreInput}, not a score: no fused kernel covers that`;
  }
  const middle = [
    score,
    ...(scoreMod ? [scoreMod] : []),
    ...[...masks].reverse(),
    softmax,
    ...(dropout ? [dropout] : []),
  ];

  // The score expression (over score = scale · raw) and the mask expressions, each with the gathered values it reads.
  let scale = 1;
  let scorePart: ModPart | undefined;
  if (scoreMod?.kind === "alibi") {
    const part = alibiPart(scoreMod);
    if (typeof part === "string") return part;
    scorePart = part;
    scale = scoreMod.attrs.scale as number;
  } else if (scoreMod) {
    scorePart = {
      expr: scoreMod.attrs.expr as Expr,
      names: scoreMod.attrs.inputs as string[],
      values: (scoreMod.attrs.inputs as string[]).map((_, i) => scoreMod.inputs[1 + i]!),
    };
    scale = scoreMod.attrs.scale as number;
  }
  const maskParts: ModPart[] = [];
  if (maskMod)
    maskParts.push({
      expr: maskMod.attrs.expr as Expr,
      names: maskMod.attrs.inputs as string[],
      values: (maskMod.attrs.inputs as string[]).map((_, i) => maskMod.inputs[1 + i]!),
    });
  // The mask: a user mask hides, a bias adds after the mask's scale, the softmax's scale multiplies what it gets.
  let after = mask ? ((mask.attrs.scale as number | undefined) ?? 1) : 1;
  if (mask?.inputs[2] !== undefined) {
    const part = userMaskPart(score, mask.inputs[2], shapeOf(mask.inputs[2]) ?? []);
    if (typeof part === "string") return part;
    maskParts.push(part);
  }
  if (mask?.inputs[3] !== undefined) {
    const part = biasPart(
      score,
      mask.inputs[3],
      shapeOf(mask.inputs[3]) ?? [],
      times(scorePart?.expr ?? "score", after),
    );
    if (typeof part === "string") return part;
    scorePart = {
      expr: part.expr,
      names: [...(scorePart?.names ?? []), ...part.names],
      values: [...(scorePart?.values ?? []), ...part.values],
    };
    after = 1;
  }
  after *= softmax.attrs.scale as number;
  if (scorePart) scorePart = { ...scorePart, expr: times(scorePart.expr, after) };
  else scale = after; // no score modification: the scales are one linear factor
  const gathered = mergeGathered(
    [scorePart, ...maskParts],
    new Set(middle.map((s) => s.node)),
    (scoreMod ?? mask ?? maskMod)?.node ?? ws.node,
  );
  if (typeof gathered === "string") return gathered;
  const [scoreExpr, ...maskExprs] = gathered.exprs;
  const maskExpr = maskExprs.reduce<Expr | undefined>(
    (a, e) => (a === undefined ? e : { op: "and", args: [a, e!] }),
    undefined,
  );
  const attrs = {
    causal: mask?.attrs.causal ?? false,
    window: mask?.attrs.window ?? null,
    alignment: mask?.attrs.alignment ?? "top-left",
    scale,
    dropoutRate: dropout?.attrs.rate ?? 0,
    dropoutSeed: dropout?.attrs.seed ?? 0,
    training: dropout?.attrs.training ?? false,
    ...(scoreExpr !== undefined || maskExpr !== undefined
      ? { scoreMod: scoreExpr ?? null, maskMod: maskExpr ?? null, inputs: gathered.names }
      : {}),
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
    scoreModSlots:
      scoreMod?.kind === "score-mod" ? gathered.slots[0]!.slice(0, (scoreMod.attrs.inputs as string[]).length) : [],
  };
}

interface Merged {
  /** Each part's expression with its reads renamed to the fused step's names (undefined where there is no part). */
  readonly exprs: (Expr | undefined)[];
  readonly names: string[];
  readonly values: string[];
  /** For each part, its name i → the fused step's slot. */
  readonly slots: number[][];
}

/**
 * One list of gathered inputs for the fused step from the parts' own: a tensor two parts read takes one slot (under
 * the first name it had), a name two parts use for different tensors gets a fresh name in the second. A gathered
 * input that is a value of the chain itself (the scores, read at other positions) cannot be fused: nothing computes
 * it any more.
 */
function mergeGathered(
  parts: readonly (ModPart | undefined)[],
  middle: ReadonlySet<string>,
  node: string,
): Merged | string {
  const names: string[] = [];
  const values: string[] = [];
  const exprs: (Expr | undefined)[] = [];
  const slots: number[][] = [];
  for (const part of parts) {
    if (!part) {
      exprs.push(undefined);
      slots.push([]);
      continue;
    }
    const renames = new Map<string, string>();
    const mine: number[] = [];
    for (let i = 0; i < part.names.length; i++) {
      const value = part.values[i]!;
      const own = part.names[i]!;
      if (middle.has(value))
        return `${node} gathers from ${value}, a value inside the attention chain: a fused kernel never holds it`;
      let at = values.indexOf(value);
      if (at < 0) {
        let name = own;
        for (let n = 1; names.includes(name); n++) name = `${own}_${n}`;
        names.push(name);
        values.push(value);
        at = values.length - 1;
      }
      if (names[at] !== own) renames.set(own, names[at]!);
      mine.push(at);
    }
    if (values.length > MAX_GATHERED)
      return `${node}: the modifications gather from ${values.length} tensors, the fused kernels take at most ${MAX_GATHERED}`;
    exprs.push(renameReads(part.expr, renames));
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
