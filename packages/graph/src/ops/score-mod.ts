import { derive, treeSize } from "../expr/derive.js";
import type { Expr } from "../expr/types.js";
import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";
import { perHeadInput, SCALE_ATTR } from "./attention-parts.js";
import {
  checkNodeExpr,
  exprModShape,
  GATHERED_NAMES_ATTR,
  GATHERED_SLOTS,
  gatheredInputs,
  gatheredRanks,
  MAX_GATHERED,
} from "./gathered.js";
import { expectDim } from "./shape-checks.js";

export interface ScoreModAttrs {
  /** The raw scores are multiplied by this before the expression sees them (the attention's score scale). */
  readonly scale: number;
  /** FlexAttention's score_mod as data: a number from `score` (= scale · x), b, h, q, kv and gathered inputs. */
  readonly expr: Expr;
  /** The gathered inputs' names, slot by slot (g0, g1, …). */
  readonly inputs: readonly string[];
}

/**
 * A score modification: out[b, h, q, kv] = expr(score = scale · x[b, h, q, kv], b, h, q, kv), reading gathered inputs
 * (per-head slopes, a bias table, …) at the indices it computes. x [B, H, L, S] → [B, H, L, S]. ALiBi, relative
 * biases, soft-capping and temperatures are each one expression; the fused attention evaluates the same expression
 * inside its streaming loop (see attention's scoreMod).
 */
export const scoreModOp = defineOp<ScoreModAttrs>({
  kind: "score-mod",
  doc: "out = expr(score = scale · x, b, h, q, kv), a pointwise score modification over [B, H, L, S] reading gathered inputs.",
  inputs: [perHeadInput("x", "[B, H, L, S], raw scores"), ...GATHERED_SLOTS],
  attrs: {
    scale: SCALE_ATTR,
    expr: { type: "expr", doc: "the modification (golden-flex FORMAT.md)" },
    inputs: GATHERED_NAMES_ATTR,
  },
  outputHeads: 1,
  // Not in place: a gathered input may be x itself (or a view of it), read at other positions than the one written.
  inferShape: exprModShape("score"),
  // d out / d x = scale · expr'(score) (another score-mod, with the gradient gathered as one more input); a learnable
  // gathered input gets Σ grad · d expr / d read over every element and read (score-mod-input-grad).
  vjp: (ctx) => {
    const g = gradOf(ctx, "score-mod");
    const { scale, expr, inputs } = ctx.attrs;
    const [x, ...gathered] = ctx.inputs;
    const out: (string | undefined)[] = [undefined, ...gathered.map(() => undefined)];
    if (ctx.needs(0)) {
      const step = scoreModGradStep({ scale, expr, inputs });
      if (step === "identity") out[0] = g;
      else if (typeof step === "string") ctx.unsupported(step);
      else if (step.gathersGrad)
        out[0] = ctx.addGrad(
          0,
          "score-mod",
          { x: x!, ...gatheredInputs([...gathered.slice(0, inputs.length), g]) },
          { ...step.attrs },
        );
      else out[0] = ctx.addGrad(0, "score-mod", { x: g }, { ...step.attrs });
    }
    inputs.forEach((name, i) => {
      if (!ctx.needs(i + 1)) return;
      out[i + 1] = ctx.addGrad(
        i + 1,
        "score-mod-input-grad",
        { x: x!, grad: g, ...gatheredInputs(gathered.slice(0, inputs.length)) },
        { scale, expr, inputs, wrt: name },
      );
    });
    return out;
  },
});

/** The most nodes a derivative may have (the bound of any expression: checkExpr's). */
const MAX_DERIVED = 10_000;

/**
 * The step score-mod's rule adds for the gradient of x: none (the identity), a score-mod of the gradient alone (a
 * constant derivative), or a score-mod of x gathering the gradient as one more input (`gathersGrad`); a string says
 * why there is none. One definition for the rule and for the scheduler's backward fusion, which recognises the step.
 */
export function scoreModGradStep(
  a: ScoreModAttrs,
): "identity" | { readonly attrs: ScoreModAttrs; readonly gathersGrad: boolean } | string {
  const dScore = derive(a.expr, { kind: "score" });
  if (treeSize(dScore, MAX_DERIVED) > MAX_DERIVED)
    return `the score's gradient of this score modification: its derivative has more than ${MAX_DERIVED} nodes`;
  if (dScore === 1 && a.scale === 1) return "identity";
  if (typeof dScore === "number")
    return {
      attrs: { scale: 1, expr: { op: "mul", args: ["score", Math.fround(dScore * a.scale)] }, inputs: [] },
      gathersGrad: false,
    };
  if (a.inputs.length >= MAX_GATHERED)
    return `the gradient of a score-mod with ${MAX_GATHERED} gathered inputs (its backward gathers one more: the gradient)`;
  const gradName = freshName(a.inputs);
  const upstream: Expr = { op: "input", name: gradName, index: ["b", "h", "q", "kv"] };
  // A zero gradient (a key the mask hid, a row that sees no key) stays 0: the derivative may be ±∞ or NaN there
  // (score / (q − kv) at q = kv), and 0 · ∞ would be NaN.
  const times: Expr = {
    op: "where",
    args: [
      { op: "ne", args: [upstream, 0] },
      { op: "mul", args: [upstream, a.scale === 1 ? dScore : { op: "mul", args: [dScore, a.scale] }] },
      0,
    ],
  };
  return { attrs: { scale: a.scale, expr: times, inputs: [...a.inputs, gradName] }, gathersGrad: true };
}

/** A gathered-input name not among `taken`, for the gradient the backward gathers. */
function freshName(taken: readonly string[]): string {
  let name = "grad";
  for (let i = 1; taken.includes(name); i++) name = `grad_${i}`;
  return name;
}

export interface ScoreModInputGradAttrs extends ScoreModAttrs {
  /** The gathered input whose gradient this is. */
  readonly wrt: string;
}

/**
 * The gradient of a score-mod's gathered input `wrt`: zeros of its shape, plus grad[b, h, q, kv] · d expr / d read at
 * the index of every read of `wrt`, over every element. x and grad [B, H, L, S].
 */
export const scoreModInputGradOp = defineOp<ScoreModInputGradAttrs>({
  kind: "score-mod-input-grad",
  doc: "The gradient of a score-mod's gathered input: Σ grad · d expr / d read, scattered to the indices it read.",
  inputs: [
    { name: "x", rank: 4, doc: "[B, H, L, S], the forward's raw scores" },
    { name: "grad", rank: 4, doc: "[B, H, L, S], the gradient of the score-mod's output" },
    ...GATHERED_SLOTS,
  ],
  attrs: {
    scale: SCALE_ATTR,
    expr: { type: "expr" },
    inputs: { type: "strings", default: [] },
    wrt: { type: "string" },
  },
  inferShape: ([x, grad, ...gathered], { expr, inputs, wrt }, ctx) => {
    x!.forEach((d, i) => expectDim(ctx, "grad", `dim ${i} of the gradient must match the scores`, d, grad![i]!, grad));
    checkNodeExpr(ctx, "expr", expr, "score", gatheredRanks(ctx, inputs, gathered));
    const i = inputs.indexOf(wrt);
    if (i < 0)
      ctx.fail("wrt", "not a gathered input of the expression", inputs.join(", ") || "no gathered inputs", wrt);
    return gathered[i]!;
  },
});
