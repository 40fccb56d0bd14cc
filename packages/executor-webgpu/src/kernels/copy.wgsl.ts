// copy: a strided view into a dense row-major tensor. Used where a view cannot express a result (reshape of a
// permuted tensor) and where a program needs dense input.
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";

/** Params: the source view at word 0, then the element count. */
export function copyProgram(x: GpuTensor, out: GpuTensor): ProgramInfo {
  const params = new Params();
  params.view(x);
  const n = params.u32(x.size);
  return {
    name: "copy",
    cacheKey: "copy",
    code: () => /* wgsl */ `${PRELUDE}
${storageBindings(["X"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i >= pu(${n}u)) { return; }
  Y[i] = X[view_at(0u, i)];
}`,
    params,
    inputs: [x],
    output: out,
    workgroups: elementwiseGrid(x.size),
  };
}
