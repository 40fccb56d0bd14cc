// adam-moment: one of Adam's moments (torch.optim.Adam), beta · state + (1 − beta) · g or · g² (`square`), with
// g = grad + weightDecay · param, in float64 in the module (assembly/adam.ts `adamMoment`), rounded once. All three
// dense: one span of elements; else state and grad go row by row through their descriptors and a strided param is
// copied dense first. With a signal, a big call runs in chunks.
import { checkAdamMomentAttrs, expectSameShape, withCleanup } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { writeOptim } from "./optim-params.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, optionalInput, requireInput } from "./adapter.js";

/** Inputs: state [...], grad [...], optional param [...] (needed when weightDecay > 0); attrs { beta, square, weightDecay } → [...]. */
export const adamMomentKernel = chunkedKernel((call, ctx) => {
  const s = requireInput(call, 0, "state");
  const g = requireInput(call, 1, "grad");
  const { beta, square, weightDecay } = checkAdamMomentAttrs(call);
  // Weight decay reads the parameter: without it, the missing-input error naming `<node>.param`.
  const p = weightDecay > 0 ? requireInput(call, 2, "param") : optionalInput(call, 2, "param");
  expectSameShape(call, "grad", s, g);
  if (p) expectSameShape(call, "param", s, p);
  const sq = square ? 1 : 0;
  const hasParam = p ? 1 : 0;
  const out = ctx.output(call, s.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    let temp: WasmValue | undefined;
    const run = () => {
      if (p && !p.dense) temp = ctx.dense(p, `${call.node} (dense copy of a strided param)`).value;
      const pd = temp ?? p;
      if (s.dense && g.dense) {
        // Chunks of elements: any range of a span is itself a span.
        const part = (e0: number, e1: number) =>
          ctx.exports.adamMoment(
            s.address + e0 * 4,
            g.address + e0 * 4,
            pd ? pd.address + e0 * 4 : 0,
            out.address + e0 * 4,
            e1 - e0,
            writeOptim(ctx, ctx.params, { beta, wd: weightDecay, flag: sq, hasParam }),
          );
        return overRows(call, ctx, s.size, ADAM_MOMENT_WORK, part);
      }
      const n = s.shape[s.rank - 1]!;
      // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
      const part = (r0: number, r1: number) =>
        ctx.exports.adamMomentStrided(
          s.address,
          ctx.desc(s, 0),
          g.address,
          ctx.desc(g, 1),
          out.address,
          writeOptim(ctx, ctx.params, { extra: pd?.address ?? 0, beta, wd: weightDecay, flag: sq, hasParam }),
          r0,
          r1,
        );
      return overRows(call, ctx, s.size / n, n * ADAM_MOMENT_WORK, part);
    };
    return withCleanup(run, () => temp && ctx.release(temp));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: three loads and four float64 multiply-adds. */
const ADAM_MOMENT_WORK = 4;
