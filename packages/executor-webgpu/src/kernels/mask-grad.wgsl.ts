// mask-grad: the input gradient of mask and ALiBi (ops that scale visible scores and hide others as −∞), read from
// the forward output: out = 0 where masked is −∞ (found by its bits), scale · grad everywhere else (a NaN or +∞ in
// masked included). One invocation per element; grad and masked may have any strides.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { requireInput } from "./checks.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks).
import { checkGradScale, expectSameShape } from "@attngraph/graph";

/** Params: grad view, masked view, n, scale. */
function program(grad: GpuTensor, masked: GpuTensor, scale: number, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const gv = p.view(grad);
  const mv = p.view(masked);
  const n = p.u32(out.size);
  const sc = p.f32(scale);
  return {
    name: "mask-grad",
    cacheKey: "mask-grad",
    code: () => /* wgsl */ `${PRELUDE}
${storageBindings(["G", "M"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i >= pu(${n}u)) { return; }
  let hidden = is_neg_inf(M[view_at(${mv}u, i)]);
  var v = 0.0;
  if (!hidden) { v = pf(${sc}u) * G[view_at(${gv}u, i)]; }
  Y[i] = v;
}`,
    params: p,
    inputs: [grad, masked],
    output: out,
    workgroups: elementwiseGrid(out.size),
  };
}

/** Inputs: grad [...], masked [...] (the forward output, −∞ = hidden); attrs { scale } → same shape. */
export const maskGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const masked = requireInput(call, 1, "masked");
  const scale = checkGradScale(call);
  expectSameShape(call, "masked", grad, masked);
  const out = gpu.alloc(grad.shape);
  if (out.size > 0) await gpu.run(program(grad, masked, scale, out));
  return out;
};
