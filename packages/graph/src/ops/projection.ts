import { formatDims, type SymShape } from "../dims.js";
import { defineOp, type OpContext, type OpInput } from "../op-def.js";
import { expectDim } from "./shape-checks.js";
import { linearGrads, gradOf } from "../vjp-helpers.js";

export interface ProjectionAttrs {}

/** `x · Wᵀ (+ b)` over the last axis, PyTorch nn.Linear layout. x [..., In], weight [Out, In], bias [Out] → [..., Out]. */
export const projectionOp = defineOp<ProjectionAttrs>({
  kind: "projection",
  doc: "x · Wᵀ (+ b) over the last axis (nn.Linear layout: weight is [out, in]).",
  inputs: linearInputs(),
  attrs: {},
  inferShape: linearShape,
  // dx = g · W, dW = Σ gᵀ · x, db = Σ g (vjp-helpers.ts).
  vjp: (ctx) => linearGrads(ctx, gradOf(ctx, "projection")),
});

/**
 * The inputs of the projection-like ops (projection, out-proj, linear-gelu): x, weight (rank 2) and an optional bias
 * (rank 1), with the docs of their shapes.
 */
export function linearInputs(x = "[..., In]", weight = "[Out, In]", bias = "[Out]"): readonly OpInput[] {
  return [
    { name: "x", doc: x },
    { name: "weight", rank: 2, doc: weight },
    { name: "bias", optional: true, rank: 1, doc: bias },
  ];
}

/** The shape rule of the projection-like ops: x [..., In], weight [Out, In], bias [Out] → [..., Out]. */
export function linearShape([x, w, b]: readonly (SymShape | undefined)[], _attrs: object, ctx: OpContext): SymShape {
  if (x!.length < 1) ctx.fail("x", "input must have at least one axis", "rank >= 1", formatDims(x!));
  expectDim(ctx, "weight", "weight columns must equal the input's last dim", x![x!.length - 1]!, w![1]!, w);
  if (b) expectDim(ctx, "bias", "bias length must equal the weight's rows", w![0]!, b[0]!, b);
  return [...x!.slice(0, -1), w![0]!];
}
