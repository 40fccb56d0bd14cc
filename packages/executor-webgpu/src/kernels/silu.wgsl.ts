// silu and silu-grad, elementwise over any strided inputs: x · sigmoid(x) and grad · (s + x · s(1 − s)). SILU_WGSL's
// sigmoid is built from exp(−|x|) only, so it never overflows: a large negative x gives −0 (gradient 0), not NaN.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { requireInput } from "./checks.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks).
import { expectSameShape } from "@attngraph/graph";

/** WGSL: `sigmoid(v)` without overflow; needs nothing but itself. */
export const SILU_WGSL = /* wgsl */ `
fn sigmoid(v: f32) -> f32 {
  let z = exp(-abs(v));
  return select(z / (1.0 + z), 1.0 / (1.0 + z), v >= 0.0);
}`;

/** Params: x view (and grad view for the backward), n. One invocation per element. */
function program(x: GpuTensor, grad: GpuTensor | undefined, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const xv = p.view(x);
  const gv = grad ? p.view(grad) : 0;
  const n = p.u32(out.size);
  const body = grad
    ? `let v = X[view_at(${xv}u, i)]; let s = sigmoid(v); Y[i] = G[view_at(${gv}u, i)] * (s + v * (s * (1.0 - s)));`
    : `let v = X[view_at(${xv}u, i)]; Y[i] = v * sigmoid(v);`;
  const name = grad ? "silu-grad" : "silu";
  return {
    name,
    cacheKey: name,
    code: () => /* wgsl */ `${PRELUDE}${SILU_WGSL}
${storageBindings(grad ? ["X", "G"] : ["X"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i >= pu(${n}u)) { return; }
  ${body}
}`,
    params: p,
    inputs: grad ? [x, grad] : [x],
    output: out,
    workgroups: elementwiseGrid(out.size),
  };
}

/** Input: x [...] → same shape. */
export const siluKernel: WebGpuKernel = async (call, gpu) => {
  const x = requireInput(call, 0, "x");
  const out = gpu.alloc(x.shape);
  if (out.size > 0) await gpu.run(program(x, undefined, out));
  return out;
};

/** Inputs: grad [...], x [...] (the forward input) → same shape. */
export const siluGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  expectSameShape(call, "x", grad, x);
  const out = gpu.alloc(x.shape);
  if (out.size > 0) await gpu.run(program(x, grad, out));
  return out;
};
