// embedding: rows of a [V, E] table by int32 id, out[..., :] = weight[ids[...], :] (nn.Embedding). Every id is checked
// to be in [0, V) on the host before anything is encoded, naming the node, the position and the id: an uploaded ids
// tensor is checked from its host copy (no readback), any other is read back once, like key padding flags. The ids
// are read as array<i32>, never through f32. ids may be any strided view; the table is read through its strides.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { input } from "./inputs.js";
import { storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks): the ids' range, read from their values.
import { findBadIndex } from "@attngraph/graph";

/** Params: n, ids view, table (offset, row stride, column stride), V, E. One invocation per output element. */
function program(ids: GpuTensor, table: GpuTensor, out: GpuTensor): ProgramInfo {
  const [nv, ne] = table.shape as [number, number];
  const p = elementwiseParams(out.size);
  const iv = p.view(ids);
  const tw = p.u32(table.offset);
  p.u32(table.strides[0]!);
  p.u32(table.strides[1]!);
  const v = p.u32(nv);
  const e = p.u32(ne);
  return elementwiseProgram({
    name: "embedding",
    params: p,
    bindings: storageBindings(["IDS", "W"], { IDS: "i32" }),
    index: "o",
    body: /* wgsl */ `  let ne = pu(${e}u);
  let id = IDS[view_at(${iv}u, o / ne)];
  // Checked on the host already; the guard keeps a bad id from ever reading another row (it gives NaN instead).
  if (id < 0 || u32(id) >= pu(${v}u)) { Y[o] = nan(); return; }
  Y[o] = W[pu(${tw}u) + u32(id) * pu(${tw + 1}u) + (o % ne) * pu(${tw + 2}u)];`,
    inputs: [ids, table],
    output: out,
  });
}

/** Inputs: ids [...] int32, weight [V, E] float32 → [..., E]. */
export const embeddingKernel: WebGpuKernel = async (call, gpu) => {
  const ids = input(call, 0);
  const table = input(call, 1);
  const [nv, ne] = table.shape as [number, number];
  const bad = findBadIndex(call, "ids", (await gpu.hostValues(ids)).toInt32Array(), ids.shape, nv, "token id");
  if (bad) throw bad;
  const out = gpu.alloc([...ids.shape, ne]);
  await gpu.run(program(ids, table, out));
  return out;
};
