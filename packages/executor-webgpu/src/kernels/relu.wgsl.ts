// relu, elementwise over any strided x: max(x, 0) with NaN kept, as torch.relu. Decided on the bits, not with max() or
// a comparison: WGSL leaves max's NaN result to the implementation and lets a compiler assume comparisons never see
// NaN. So x is kept when it is positive (sign bit clear, not ±0) or NaN, else the result is +0 (−0 and −∞ included).
// RELU_WGSL (`relu_keeps`) is shared with relu-grad, whose test on the forward output is the same one.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { requireInput } from "./checks.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";

/** WGSL: `relu_keeps(v)` (v > 0 or NaN, on the bits) and `relu(x)`; needs nothing but itself. */
export const RELU_WGSL = /* wgsl */ `
fn relu_keeps(v: f32) -> bool {
  let b = bitcast<u32>(v);
  return (b != 0u && b < 0x80000000u) || (b & 0x7fffffffu) > 0x7f800000u;
}
fn relu(x: f32) -> f32 { return select(0.0, x, relu_keeps(x)); }`;

/** Params: x view, n. One invocation per element. */
function program(x: GpuTensor, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const xv = p.view(x);
  const n = p.u32(x.size);
  return {
    name: "relu",
    cacheKey: "relu",
    code: () => /* wgsl */ `${PRELUDE}${RELU_WGSL}
${storageBindings(["X"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i >= pu(${n}u)) { return; }
  Y[i] = relu(X[view_at(${xv}u, i)]);
}`,
    params: p,
    inputs: [x],
    output: out,
    workgroups: elementwiseGrid(x.size),
  };
}

/** Input: x [...] → same shape. */
export const reluKernel: WebGpuKernel = async (call, gpu) => {
  const x = requireInput(call, 0, "x");
  const out = gpu.alloc(x.shape);
  if (out.size > 0) await gpu.run(program(x, out));
  return out;
};
