// Backward rules of the fused ops (linear-gelu, add-layer-norm, attention). A fused step keeps none of its middle
// values, so each rule recomputes the ones its gradient needs as backward nodes, then follows the rules of the parts.
// (A fused attention backward that never materialises [L, S] is a kernel of its own, not this composition.)
import { gradOf, linearGrads, sumHeadGroups, swapLast, unbroadcast } from "../vjp-helpers.js";
import type { VjpContext } from "../vjp.js";
import type { AddLayerNormAttrs } from "./add-layer-norm.js";
import type { AttentionAttrs } from "./attention.js";
import type { AttentionGradWrt } from "./attention-grad.js";
import { hasMods } from "./attention-mods.js";
import { gatheredInputs } from "./gathered.js";
import type { LinearGeluAttrs } from "./linear-gelu.js";

/** linear-gelu: the pre-activation x · Wᵀ + b again, GELU's rule on it, then the projection's. */
export function gelu(ctx: VjpContext<LinearGeluAttrs>): (string | undefined)[] {
  const [x, weight, bias] = ctx.inputs;
  const pre = ctx.add("projection", "pre", { x, weight, bias });
  const g = ctx.add(
    "gelu-grad",
    "pre.grad",
    { grad: gradOf(ctx, "linear-gelu"), x: pre },
    { approximate: ctx.attrs.approximate },
  );
  return linearGrads(ctx, g);
}

/** add-layer-norm: the output is [sum | norm]; the sum's gradient is its own part plus what flows back through the norm. */
export function addLayerNorm(ctx: VjpContext<AddLayerNormAttrs>): (string | undefined)[] {
  const g = gradOf(ctx, "add-layer-norm");
  const [a, b, weight, bias] = ctx.inputs as [string, string, string | undefined, string | undefined];
  const out = ctx.shapeOf(ctx.output);
  const e = (out[out.length - 1] as number) / 2; // the shape rule made the last dim a known 2E
  const eps = ctx.attrs.eps;
  const gSum = ctx.add("slice", "grad.sum", { x: g }, { axis: -1, start: 0, size: e });
  const gNorm = ctx.add("slice", "grad.norm", { x: g }, { axis: -1, start: e, size: e });
  const sum = ctx.add("add", "sum", { a, b });
  const through = ctx.add("layer-norm-grad", "norm.grad", { grad: gNorm, x: sum, weight }, { eps });
  const dSum = ctx.add("add", "sum.grad", { a: gSum, b: through });
  return [
    ctx.needs(0) ? unbroadcast(ctx, 0, dSum, ctx.shapeOf(a)) : undefined,
    ctx.needs(1) ? unbroadcast(ctx, 1, dSum, ctx.shapeOf(b)) : undefined,
    weight !== undefined && ctx.needs(2)
      ? ctx.addGrad(2, "layer-norm-weight-grad", { grad: gNorm, x: sum }, { eps })
      : undefined,
    bias !== undefined && ctx.needs(3) ? ctx.addGrad(3, "sum-to", { x: gNorm }, { shape: [e] }) : undefined,
  ];
}

/**
 * attention: scores, weights again from q, k (and the mask), then the chain's rules in reverse. With a score or mask
 * modification, the fused backward's own ops (attention-lse, then attention-grad per needed input, gathered slots
 * included): the expressions' derivatives live in those kernels, not in a composition of nodes.
 */
export function attention(ctx: VjpContext<AttentionAttrs>): (string | undefined)[] {
  if (hasMods(ctx.attrs)) return attentionWithMods(ctx);
  const g = gradOf(ctx, "attention");
  const [q, k, v, pad] = ctx.inputs as [string, string, string, string | undefined];
  const a = ctx.attrs;
  const scores = ctx.add("score", "scores", { q, k });
  const masking = a.causal || pad !== undefined;
  const masked = masking
    ? ctx.add(
        "mask",
        "masked",
        { scores, keyPaddingMask: pad },
        { causal: a.causal, window: a.window, alignment: a.alignment },
      )
    : scores;
  const probs = ctx.add("softmax", "probs", { x: masked }, { scale: a.scale });
  const dropping = a.training && a.dropoutRate > 0;
  const drop = { rate: a.dropoutRate, seed: a.dropoutSeed, training: a.training };
  const weights = dropping ? ctx.add("dropout", "weights", { x: probs }, drop) : probs;
  const dWeights = ctx.add("score", "weights.grad", { q: g, k: v });
  const dProbs = dropping ? ctx.add("dropout", "probs.grad", { x: dWeights }, drop) : dWeights;
  const dMasked = ctx.add("softmax-grad", "masked.grad", { y: probs, grad: dProbs }, { scale: a.scale });
  const dScores = masking ? ctx.add("mask-grad", "scores.grad", { grad: dMasked, masked }, { scale: 1 }) : dMasked;
  return [
    ctx.needs(0) ? ctx.addGrad(0, "weighted-sum", { weights: dScores, v: k }) : undefined,
    ctx.needs(1)
      ? sumHeadGroups(
          ctx,
          1,
          "weighted-sum",
          { weights: swapLast(ctx, dScores, "scores.grad.t"), v: q },
          ctx.shapeOf(k),
          "k",
        )
      : undefined,
    ctx.needs(2)
      ? sumHeadGroups(
          ctx,
          2,
          "weighted-sum",
          { weights: swapLast(ctx, weights, "weights.t"), v: g },
          ctx.shapeOf(v),
          "v",
        )
      : undefined,
    undefined,
  ];
}

function attentionWithMods(ctx: VjpContext<AttentionAttrs>): (string | undefined)[] {
  const g = gradOf(ctx, "attention");
  const [q, k, v, pad, ...gathered] = ctx.inputs as (string | undefined)[];
  const a = ctx.attrs;
  const mods = { scoreMod: a.scoreMod ?? null, maskMod: a.maskMod ?? null, inputs: a.inputs ?? [] };
  const slots = gatheredInputs(gathered.slice(0, mods.inputs.length));
  const lse = ctx.add(
    "attention-lse",
    "lse",
    { q, k, keyPaddingMask: pad, ...slots },
    { causal: a.causal, window: a.window, alignment: a.alignment, scale: a.scale, ...mods },
  );
  const inputs = { q, k, v, out: ctx.output, grad: g, lse, keyPaddingMask: pad, ...slots };
  const wrt = (i: number): AttentionGradWrt => (i < 3 ? (["q", "k", "v"] as const)[i]! : `g${i - 4}`);
  return ctx.inputs.map((x, i) =>
    x !== undefined && i !== 3 && ctx.needs(i)
      ? ctx.addGrad(i, "attention-grad", inputs, { ...a, ...mods, wrt: wrt(i) })
      : undefined,
  );
}
