import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";
import { expectDim } from "./shape-checks.js";
import { linearGrads, gradOf } from "../vjp-helpers.js";

export interface ProjectionAttrs {}

/** `x · Wᵀ (+ b)` over the last axis, PyTorch nn.Linear layout. x [..., In], weight [Out, In], bias [Out] → [..., Out]. */
export const projectionOp = defineOp<ProjectionAttrs>({
  kind: "projection",
  doc: "x · Wᵀ (+ b) over the last axis (nn.Linear layout: weight is [out, in]).",
  inputs: [
    { name: "x", doc: "[..., In]" },
    { name: "weight", rank: 2, doc: "[Out, In]" },
    { name: "bias", optional: true, rank: 1, doc: "[Out]" },
  ],
  attrs: {},
  inferShape: ([x, w, b], _attrs, ctx) => linearShape(x!, w!, b, ctx),
  // dx = g · W, dW = Σ gᵀ · x, db = Σ g (vjp-helpers.ts).
  vjp: (ctx) => linearGrads(ctx, gradOf(ctx, "projection")),
});

export function linearShape(
  x: readonly (string | number)[],
  w: readonly (string | number)[],
  b: readonly (string | number)[] | undefined,
  ctx: Parameters<typeof expectDim>[0],
) {
  if (x.length < 1) ctx.fail("x", "input must have at least one axis", "rank >= 1", formatDims(x));
  expectDim(ctx, "weight", "weight columns must equal the input's last dim", x[x.length - 1]!, w[1]!, w);
  if (b) expectDim(ctx, "bias", "bias length must equal the weight's rows", w[0]!, b[0]!, b);
  return [...x.slice(0, -1), w[0]!];
}
