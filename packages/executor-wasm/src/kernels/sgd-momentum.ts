// sgd-momentum: SGD's momentum buffer (torch.optim.SGD): with d = grad + weightDecay · param, d at the first step
// (t = 1, PyTorch's clone: buf is not read) and momentum · buf + (1 − dampening) · d after, in float64 in the module
// (assembly/sgd.ts `sgdMomentum`), rounded once. The step t is one float read here from the module's memory and
// checked (an integer >= 1). All dense (buf not counted at t = 1): one span of elements; else buf and grad go row by
// row through their descriptors and a strided param is copied dense first. With a signal, a big call runs in chunks.
import { checkOptimizerStepValue, type SgdMomentumAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { runOptimUpdate } from "./optim-update.js";
import { attrsOf, optionalInput, requireInput } from "./adapter.js";

/**
 * Inputs: buf [...], grad [...], optional param [...] (needed when weightDecay > 0), step [] or [1] (t, 1 for the
 * first step); attrs { momentum, dampening, weightDecay } → [...].
 */
export const sgdMomentumKernel = chunkedKernel((call, ctx) => {
  const b = requireInput(call, 0, "buf");
  const g = requireInput(call, 1, "grad");
  const { momentum, dampening, weightDecay } = attrsOf<SgdMomentumAttrs>(call);
  // Present whenever weightDecay > 0 (the shape rule's "weight decay needs the parameter").
  const p = optionalInput(call, 2, "param");
  const step = requireInput(call, 3, "step");
  const t = checkOptimizerStepValue(call, ctx.f32()[step.address / 4]!); // read from the module's memory
  const first = t === 1 ? 1 : 0;
  const keep = 1 - dampening;
  const hasParam = p ? 1 : 0;
  return runOptimUpdate(
    call,
    ctx,
    { span: "sgdMomentum", rows: "sgdMomentumStrided" },
    // At the first step buf is not read (PyTorch's clone).
    { x: b, y: g, z: p, zName: "param", readsX: first === 0, readsY: true },
    { mu: momentum, keep, wd: weightDecay, flag: first, hasParam },
    SGD_MOMENTUM_WORK,
  );
});

/** Work per element in multiply-adds of the SIMD matmul: three loads and three float64 multiply-adds. */
const SGD_MOMENTUM_WORK = 3;
