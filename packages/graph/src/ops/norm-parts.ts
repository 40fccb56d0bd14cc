// What the norms over the last axis (layer-norm, rms-norm, add-layer-norm) and their backward ops declare alike: eps
// checked positive, the affine weight and bias of length E, and the backward ops whole (they differ only in names,
// docs and eps's default), so a norm and its gradient can never disagree about what they accept.
import type { Dim, SymShape } from "../dims.js";
import { defineOp, type OpContext, type OpDef, type OpInput } from "../op-def.js";
import { expectAxis, expectDim, expectSameShape } from "./shape-checks.js";

/** The attributes of every norm and norm gradient. */
export interface NormEpsAttrs {
  readonly eps: number;
}

/** eps must be > 0; `why` (the forward ops') says what a zero would break. */
export function checkEps(ctx: OpContext, eps: number, why?: string): void {
  if (!(eps > 0)) ctx.fail("eps", why ? `eps must be positive (${why})` : "eps must be positive", "> 0", String(eps));
}

/** A norm's affine weight or bias, where connected: [E], E the normalized (last) dim. */
export function expectNormParam(
  ctx: OpContext,
  norm: string,
  field: "weight" | "bias",
  e: Dim,
  p: SymShape | undefined,
): void {
  if (p) expectDim(ctx, field, `${norm} ${field} length must equal the normalized (last) dim E`, e, p[0]!, p);
}

/** A norm's inputs: x [..., E], then its optional affine parameters [E] (weight, and bias where it has one). */
export function normInputs(weight: string, bias?: string): readonly OpInput[] {
  const x: OpInput = { name: "x", doc: "[..., E]" };
  const w: OpInput = { name: "weight", optional: true, rank: 1, doc: weight };
  return bias === undefined ? [x, w] : [x, w, { name: "bias", optional: true, rank: 1, doc: bias }];
}

const GRAD_INPUTS: readonly OpInput[] = [
  { name: "grad", doc: "[..., E]" },
  { name: "x", doc: "[..., E], the forward input" },
  { name: "weight", optional: true, rank: 1, doc: "[E]" },
];

/** How a norm's backward ops differ: their kind and doc, the norm's name in messages, eps's default. */
export interface NormGradSpec {
  readonly kind: string;
  readonly doc: string;
  readonly norm: string;
  readonly eps: number;
  /**
   * "x": the input gradient, statistics recomputed from x: grad [..., E], x [..., E], weight [E] (optional) → [..., E].
   * "weight": the weight gradient, Σ over rows of grad ⊙ x̂ (x̂ recomputed from x): grad [..., E], x [..., E] → [E].
   */
  readonly wrt: "x" | "weight";
}

/** A norm's backward op (see NormGradSpec.wrt); grad is checked against x first, then x's axis, then the weight. */
export function normGradOp(spec: NormGradSpec): OpDef<NormEpsAttrs> {
  return defineOp<NormEpsAttrs>({
    kind: spec.kind,
    doc: spec.doc,
    inputs: spec.wrt === "x" ? GRAD_INPUTS : GRAD_INPUTS.slice(0, 2),
    attrs: { eps: { type: "number", default: spec.eps } },
    checkAttrs: (a, ctx) => checkEps(ctx, a.eps),
    inferShape: ([g, x, w], _attrs, ctx) => {
      expectSameShape(ctx, "x", g!, x!);
      expectAxis(ctx, "x", spec.norm, x!);
      const e = x![x!.length - 1]!;
      if (spec.wrt === "weight") return [e];
      if (w) expectDim(ctx, "weight", "weight length must equal the last dim E", e, w[0]!, w);
      return x!;
    },
  });
}
