// sgd-momentum: SGD's momentum buffer (torch.optim.SGD): with d = grad + weightDecay · param, d at the first step
// (t = 1, PyTorch's clone: buf is not read) and momentum · buf + (1 − dampening) · d after, in float64 in the module
// (assembly/sgd.ts `sgdMomentum`), rounded once. The step t is one float read here from the module's memory and
// checked (an integer >= 1). All dense (buf not counted at t = 1): one span of elements; else buf and grad go row by
// row through their descriptors and a strided param is copied dense first. With a signal, a big call runs in chunks.
import {
  checkOptimizerStepValue,
  checkSgdMomentumAttrs,
  expectSameShape,
  expectStepShape,
  withCleanup,
} from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { writeOptim } from "./optim-params.js";
import type { WasmValue } from "../value.js";
import { fillingChunked, optionalInput, requireInput } from "./adapter.js";

/**
 * Inputs: buf [...], grad [...], optional param [...] (needed when weightDecay > 0), step [] or [1] (t, 1 for the
 * first step); attrs { momentum, dampening, weightDecay } → [...].
 */
export const sgdMomentumKernel = chunkedKernel((call, ctx) => {
  const b = requireInput(call, 0, "buf");
  const g = requireInput(call, 1, "grad");
  const { momentum, dampening, weightDecay } = checkSgdMomentumAttrs(call);
  // Weight decay reads the parameter: without it, the missing-input error naming `<node>.param`.
  const p = weightDecay > 0 ? requireInput(call, 2, "param") : optionalInput(call, 2, "param");
  const step = requireInput(call, 3, "step");
  expectSameShape(call, "grad", b, g);
  if (p) expectSameShape(call, "param", b, p);
  expectStepShape(call, step);
  const t = checkOptimizerStepValue(call, ctx.f32()[step.address / 4]!); // read from the module's memory
  const first = t === 1 ? 1 : 0;
  const keep = 1 - dampening;
  const hasParam = p ? 1 : 0;
  const out = ctx.output(call, b.shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    let temp: WasmValue | undefined;
    const run = () => {
      if (p && !p.dense) temp = ctx.dense(p, `${call.node} (dense copy of a strided param)`).value;
      const pd = temp ?? p;
      if ((first || b.dense) && g.dense) {
        // Chunks of elements: any range of a span is itself a span.
        const part = (e0: number, e1: number) =>
          ctx.exports.sgdMomentum(
            b.address + e0 * 4,
            g.address + e0 * 4,
            pd ? pd.address + e0 * 4 : 0,
            out.address + e0 * 4,
            e1 - e0,
            writeOptim(ctx, ctx.params, { mu: momentum, keep, wd: weightDecay, flag: first, hasParam }),
          );
        return overRows(call, ctx, b.size, SGD_MOMENTUM_WORK, part);
      }
      const n = b.shape[b.rank - 1]!;
      // The descriptor slots are shared: written again for each chunk (another kernel may run in between).
      const part = (r0: number, r1: number) =>
        ctx.exports.sgdMomentumStrided(
          b.address,
          ctx.desc(b, 0),
          g.address,
          ctx.desc(g, 1),
          out.address,
          writeOptim(ctx, ctx.params, {
            extra: pd?.address ?? 0,
            mu: momentum,
            keep,
            wd: weightDecay,
            flag: first,
            hasParam,
          }),
          r0,
          r1,
        );
      return overRows(call, ctx, b.size / n, n * SGD_MOMENTUM_WORK, part);
    };
    return withCleanup(run, () => temp && ctx.release(temp));
  });
});

/** Work per element in multiply-adds of the SIMD matmul: three loads and three float64 multiply-adds. */
const SGD_MOMENTUM_WORK = 3;
