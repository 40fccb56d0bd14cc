// adam-moment: one of Adam's moments (torch.optim.Adam), beta · state + (1 − beta) · g or · g² (`square`), with
// g = grad + weightDecay · param, in float64 in the module (assembly/adam.ts `adamMoment`), rounded once. All three
// dense: one span of elements; else state and grad go row by row through their descriptors and a strided param is
// copied dense first. With a signal, a big call runs in chunks.
import type { AdamMomentAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { runOptimUpdate } from "./optim-update.js";
import { attrsOf, optionalInput, requireInput } from "./adapter.js";

/** Inputs: state [...], grad [...], optional param [...] (needed when weightDecay > 0); attrs { beta, square, weightDecay } → [...]. */
export const adamMomentKernel = chunkedKernel((call, ctx) => {
  const s = requireInput(call, 0, "state");
  const g = requireInput(call, 1, "grad");
  const { beta, square, weightDecay } = attrsOf<AdamMomentAttrs>(call);
  // Present whenever weightDecay > 0 (the shape rule's "weight decay needs the parameter").
  const p = optionalInput(call, 2, "param");
  const sq = square ? 1 : 0;
  const hasParam = p ? 1 : 0;
  return runOptimUpdate(
    call,
    ctx,
    { span: "adamMoment", rows: "adamMomentStrided" },
    { x: s, y: g, z: p, zName: "param", readsX: true, readsY: true },
    { beta, wd: weightDecay, flag: sq, hasParam },
    ADAM_MOMENT_WORK,
  );
});

/** Work per element in multiply-adds of the SIMD matmul: three loads and four float64 multiply-adds. */
const ADAM_MOMENT_WORK = 4;
