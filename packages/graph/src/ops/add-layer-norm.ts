import { broadcastShapes } from "../broadcast.js";
import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";
import { checkEps, expectNormParam } from "./norm-parts.js";
import { addLayerNorm } from "./vjp-fused.js";

export interface AddLayerNormAttrs {
  /** As layer-norm: added to the variance, > 0. */
  readonly eps: number;
}

/**
 * add → layer-norm in one step, for the residual stream of a pre-norm block (`residual = x + attention`,
 * `ln2 = LayerNorm(residual)`): the sum and its normalisation side by side on the last axis, [..., 2E] = [a + b |
 * LayerNorm(a + b)], so that both stay values of their own. The fusion pass puts it in place of the pair and makes the
 * add's and the layer norm's nodes slices of it (views, no copy): the sum is read by the next residual add too, which a
 * single-output fused op could not serve. a, b broadcastable to [..., E] (E known), weight [E], bias [E] → [..., 2E].
 */
export const addLayerNormOp = defineOp<AddLayerNormAttrs>({
  kind: "add-layer-norm",
  doc: "Fused add → layer-norm: a + b and LayerNorm(a + b) side by side on the last axis ([..., 2E]); the fusion pass slices both out as views.",
  inputs: [
    { name: "a", doc: "[..., E]" },
    { name: "b", doc: "[..., E], broadcastable with a" },
    { name: "weight", optional: true, rank: 1, doc: "[E]" },
    { name: "bias", optional: true, rank: 1, doc: "[E]" },
  ],
  attrs: { eps: { type: "number", default: 1e-5, doc: "> 0, added to the variance" } },
  checkAttrs: (a, ctx) => checkEps(ctx, a.eps, "a constant row would divide 0 by 0"),
  inferShape: ([a, b, w, bias], _attrs, ctx) => {
    const sum = broadcastShapes(a!, b!, (i, da, db) =>
      ctx.fail("b", `shapes do not broadcast at axis ${i} from the end`, `${da} or 1`, String(db)),
    );
    if (sum.length < 1) ctx.fail("a", "add-layer-norm needs at least one axis", "rank >= 1", formatDims(sum));
    const e = sum[sum.length - 1]!;
    if (typeof e !== "number")
      return ctx.fail(
        "a",
        "the normalized (last) dim must be known to lay out [sum | norm]",
        "a number",
        formatDims(sum),
      );
    expectNormParam(ctx, "layer norm", "weight", e, w);
    expectNormParam(ctx, "layer norm", "bias", e, bias);
    return [...sum.slice(0, -1), 2 * e];
  },
  vjp: (ctx) => addLayerNorm(ctx),
});
