// relu-grad: ReLU's input gradient from its output, elementwise over any strided grad and y, as PyTorch's
// threshold_backward: grad where y > 0 or y is NaN, else exactly 0 (a select, not grad · step: a NaN or infinite grad
// where y <= 0 still gives 0). The test on y is the forward's `relu_keeps`, on the bits (see relu.wgsl.ts).
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { requireInput } from "./checks.js";
import { RELU_WGSL } from "./relu.wgsl.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks).
import { expectSameShape } from "@attngraph/graph";

/** Params: grad view, y view, n. One invocation per element; YF is the forward output y (Y is this program's). */
function program(grad: GpuTensor, y: GpuTensor, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const gv = p.view(grad);
  const yv = p.view(y);
  const n = p.u32(out.size);
  return {
    name: "relu-grad",
    cacheKey: "relu-grad",
    code: () => /* wgsl */ `${PRELUDE}${RELU_WGSL}
${storageBindings(["G", "YF"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i >= pu(${n}u)) { return; }
  Y[i] = select(0.0, G[view_at(${gv}u, i)], relu_keeps(YF[view_at(${yv}u, i)]));
}`,
    params: p,
    inputs: [grad, y],
    output: out,
    workgroups: elementwiseGrid(out.size),
  };
}

/** Inputs: grad [...], y [...] (the forward output) → same shape. */
export const reluGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const y = requireInput(call, 1, "y");
  expectSameShape(call, "y", grad, y);
  const out = gpu.alloc(y.shape);
  if (out.size > 0) await gpu.run(program(grad, y, out));
  return out;
};
