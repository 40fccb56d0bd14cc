// grad-accumulate: the running sum of a parameter's microbatch gradients (nanoGPT's gradient accumulation), one
// invocation per element in float32: scale · grad at micro step k = 1 (acc not read, so a stale or NaN sum from the
// last update cannot leak in), acc + scale · grad after. k is read in the shader, never read back; an uploaded k is
// checked on the host (an "input" error naming `<node>.step`, as on cpu and wasm), one computed on the GPU in the
// shader (a k that is not an integer >= 1 makes every output element NaN).
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { programKernel } from "./output.js";
import { VALID_STEP_WGSL, checkStep } from "./scalar-inputs.wgsl.js";
import { storageBindings } from "./shared.wgsl.js";
import type { GradAccumulateAttrs } from "@attngraph/graph";

/** Params: n, acc, grad and step views, scale. */
function program(acc: GpuTensor, grad: GpuTensor, step: GpuTensor, scale: number, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const av = p.view(acc);
  const gv = p.view(grad);
  const kv = p.view(step);
  const s = p.f32(scale);
  return elementwiseProgram({
    name: "grad-accumulate",
    params: p,
    helpers: VALID_STEP_WGSL,
    bindings: storageBindings(["A", "G", "K"]),
    body: /* wgsl */ `  let k = K[view_offset(${kv}u)];
  if (!valid_step(k)) { Y[i] = nan(); return; }
  let add = pf(${s}u) * G[view_at(${gv}u, i)];
  if (k == 1.0) { Y[i] = add; } else { Y[i] = A[view_at(${av}u, i)] + add; }`,
    inputs: [acc, grad, step],
    output: out,
  });
}

/** Inputs: acc [...], grad [...], step [] or [1] (the micro step k, 1 first); attrs { scale } → acc's shape. */
export const gradAccumulateKernel: WebGpuKernel = programKernel<GradAccumulateAttrs, [GpuTensor, GpuTensor, GpuTensor]>(
  ([acc, grad, step], { scale }, out) => program(acc, grad, step, scale, out),
  (call, [, , step]) => checkStep(call, step),
);
