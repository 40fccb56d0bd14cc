// mul: a · b with add's broadcasting, over any strides (the gate product of a SiLU-gated MLP). Both inputs are read
// as views of the output's shape: an axis an input lacks or holds once gets stride 0 (`broadcastStrides`), as in
// add.wgsl.ts.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { requireInput } from "./checks.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph: the broadcast rule and the kernel checks).
import { addShape, broadcastStrides } from "@attngraph/graph";

/** Params: a and b as views of the output shape, n. One invocation per output element. */
function program(a: GpuTensor, b: GpuTensor, shape: readonly number[], out: GpuTensor): ProgramInfo {
  const p = new Params();
  const av = p.view({ shape, strides: broadcastStrides(a.shape, a.strides, shape), offset: a.offset });
  const bv = p.view({ shape, strides: broadcastStrides(b.shape, b.strides, shape), offset: b.offset });
  const n = p.u32(out.size);
  return {
    name: "mul",
    cacheKey: "mul",
    code: () => /* wgsl */ `${PRELUDE}
${storageBindings(["A", "B"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i >= pu(${n}u)) { return; }
  Y[i] = A[view_at(${av}u, i)] * B[view_at(${bv}u, i)];
}`,
    params: p,
    inputs: [a, b],
    output: out,
    workgroups: elementwiseGrid(out.size),
  };
}

/** Inputs: a [...], b [...] broadcastable with a → the broadcast shape (which must be `call.outShape`). */
export const mulKernel: WebGpuKernel = async (call, gpu) => {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const shape = addShape(call, a, b);
  const out = gpu.alloc(shape);
  await gpu.run(program(a, b, shape, out));
  return out;
};
