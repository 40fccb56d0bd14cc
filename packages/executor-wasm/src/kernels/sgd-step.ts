// sgd-step: SGD's parameter update (torch.optim.SGD, maximize false): with d = grad + weightDecay · param,
// param − lr · u where u = d without momentum, buf (the buffer after this step's sgd-momentum) with it, and
// d + momentum · buf with `nesterov`; in float64 in the module (assembly/sgd.ts `sgdStep`), rounded once. All dense
// (grad not counted when only buf is read): one span of elements; else param and grad go row by row through their
// descriptors and a strided buf is copied dense first. With a signal, a big call runs in chunks.
import { checkLrScaleValue, type SgdStepAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { runOptimUpdate } from "./optim-update.js";
import { attrsOf, optionalInput, requireInput } from "./adapter.js";

/** The module's `mode`, which u the update subtracts: d (no momentum; a buf given is not read), buf, d + momentum · buf. */
const PLAIN = 0;
const MOMENTUM = 1;
const NESTEROV = 2;

/**
 * Inputs: param [...], grad [...], optional buf [...] (needed when momentum > 0), optional lrScale [] or [1] (this
 * step's factor on lr); attrs { lr, momentum, nesterov,
 * weightDecay } → [...].
 */
export const sgdStepKernel = chunkedKernel((call, ctx) => {
  const p = requireInput(call, 0, "param");
  const g = requireInput(call, 1, "grad");
  const { lr: baseLr, momentum, nesterov, weightDecay } = attrsOf<SgdStepAttrs>(call);
  // Present whenever momentum > 0 (the shape rule's "momentum needs the buffer").
  const b = optionalInput(call, 2, "buf");
  const lrScale = optionalInput(call, 3, "lrScale");
  // A schedule's factor, read from the module's memory like adam-step's.
  const lr = lrScale ? baseLr * checkLrScaleValue(call, ctx.f32()[lrScale.address / 4]!) : baseLr;
  const mode = momentum === 0 ? PLAIN : nesterov ? NESTEROV : MOMENTUM;
  const buf = mode === PLAIN ? undefined : b;
  return runOptimUpdate(
    call,
    ctx,
    { span: "sgdStep", rows: "sgdStepStrided" },
    // Mode MOMENTUM reads buf in place of grad.
    { x: p, y: g, z: buf, zName: "buf", readsX: true, readsY: mode !== MOMENTUM },
    { lr, mu: momentum, wd: weightDecay, flag: mode },
    SGD_STEP_WORK,
  );
});

/** Work per element in multiply-adds of the SIMD matmul: three loads and three float64 multiply-adds. */
const SGD_STEP_WORK = 3;
