import { defineOp } from "../op-def.js";
import { linearShape, type ProjectionAttrs } from "./projection.js";
import { linearGrads, gradOf } from "../vjp-helpers.js";

export type OutProjAttrs = ProjectionAttrs;

/** The output projection of the merged heads: context [B, L, E] · Wᵀ (+ b) → [B, L, Eout]. Same math as projection. */
export const outProjOp = defineOp<OutProjAttrs>({
  kind: "out-proj",
  doc: "Output projection of the merged heads: context · Wᵀ (+ b).",
  inputs: [
    { name: "x", doc: "[B, L, E]" },
    { name: "weight", rank: 2, doc: "[Eout, E]" },
    { name: "bias", optional: true, rank: 1, doc: "[Eout]" },
  ],
  attrs: {},
  inferShape: ([x, w, b], _attrs, ctx) => linearShape(x!, w!, b, ctx),
  vjp: (ctx) => linearGrads(ctx, gradOf(ctx, "out-proj")),
});
