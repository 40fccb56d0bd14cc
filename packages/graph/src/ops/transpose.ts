import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface TransposeAttrs {
  /** Output dim i is input dim perm[i]. */
  readonly perm: readonly number[];
}

/** Permutes axes; a strided view, copied only when a consumer needs contiguous data. */
export const transposeOp = defineOp<TransposeAttrs>({
  kind: "transpose",
  doc: "Permute axes (a view). Output dim i is input dim perm[i].",
  inputs: [{ name: "x" }],
  attrs: { perm: { type: "integers", doc: "permutation of the input's axes" } },
  view: true,
  inferShape: ([x], { perm }, ctx) => {
    const r = x!.length;
    const ok = perm.length === r && new Set(perm).size === r && perm.every((p) => p >= 0 && p < r);
    if (!ok)
      ctx.fail("perm", "not a permutation of the input's axes", `a permutation of 0..${r - 1}`, `[${perm.join(", ")}]`);
    return perm.map((p) => x![p]!);
  },
  // The gradient goes back through the inverse permutation.
  vjp: (ctx) => {
    const inverse: number[] = [];
    ctx.attrs.perm.forEach((p, i) => (inverse[p] = i));
    return [ctx.addGrad(0, "transpose", { x: gradOf(ctx, "transpose") }, { perm: inverse })];
  },
});
