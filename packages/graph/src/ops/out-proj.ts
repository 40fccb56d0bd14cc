import { defineOp } from "../op-def.js";
import { linearInputs, linearShape, type ProjectionAttrs } from "./projection.js";
import { linearGrads, gradOf } from "../vjp-helpers.js";

export type OutProjAttrs = ProjectionAttrs;

/** The output projection of the merged heads: context [B, L, E] · Wᵀ (+ b) → [B, L, Eout]. Same math as projection. */
export const outProjOp = defineOp<OutProjAttrs>({
  kind: "out-proj",
  doc: "Output projection of the merged heads: context · Wᵀ (+ b).",
  inputs: linearInputs("[B, L, E]", "[Eout, E]", "[Eout]"),
  attrs: {},
  inferShape: linearShape,
  vjp: (ctx) => linearGrads(ctx, gradOf(ctx, "out-proj")),
});
