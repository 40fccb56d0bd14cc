// embedding-grad: the table gradient of an embedding, a scatter-add out[ids[p], :] += grad[p, :] into a zero [V, E].
// WGSL has no float atomics, so the scatter is turned into a gather: the ids are checked on the host anyway (the same
// check and error as the forward kernel: every id in [0, V), naming the node, the position and the id; an uploaded ids
// tensor from its host copy, any other read back once), and the same pass sorts the positions by id (a counting sort,
// stable) into a CSR index: for each row v, starts[v]..starts[v + 1] delimits the positions whose id is v. One
// invocation per output element (v, e) then adds grad[p, e] over its own positions, in position order: no two
// invocations write one element, rows no id names get exactly 0, and the work is O(V·E + N·E), not O(V·E·N).
// grad may have any strides.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { attrsOf, input } from "./inputs.js";
import { storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks): the ids' range, read from their values.
import { findBadIndex, type EmbeddingGradAttrs } from "@attngraph/graph";

/** The CSR index of `ids` (each in [0, v)): starts [v + 1], then the positions ordered by id, as one u32 array. */
export function positionsById(ids: ArrayLike<number>, v: number): Uint32Array {
  const n = ids.length;
  const csr = new Uint32Array(v + 1 + n);
  for (let p = 0; p < n; p++) csr[ids[p]! + 1]!++;
  for (let k = 0; k < v; k++) csr[k + 1]! += csr[k]!;
  const next = csr.slice(0, v);
  for (let p = 0; p < n; p++) csr[v + 1 + next[ids[p]!]!++] = p;
  return csr;
}

/** Params: n (= V·E), grad view, V, E. One invocation per output element; CSR as positionsById lays it out. */
function program(grad: GpuTensor, csr: GpuTensor, nv: number, ne: number, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const gv = p.view(grad);
  const v = p.u32(nv);
  p.u32(ne);
  return elementwiseProgram({
    name: "embedding-grad",
    params: p,
    bindings: storageBindings(["G", "CSR"], { CSR: "u32" }),
    index: "o",
    body: /* wgsl */ `  let nv = pu(${v}u); let ne = pu(${v + 1}u);
  let row = o / ne; let e = o % ne;
  var s = 0.0;
  for (var k = CSR[row]; k < CSR[row + 1u]; k++) { s += G[view_at(${gv}u, CSR[nv + 1u + k] * ne + e)]; }
  Y[o] = s;`,
    inputs: [grad, csr],
    output: out,
  });
}

/** Inputs: ids [...] int32, grad [..., E]; attrs { rows: V } → [V, E]. */
export const embeddingGradKernel: WebGpuKernel = async (call, gpu) => {
  const ids = input(call, 0);
  const grad = input(call, 1);
  const { rows: nv } = attrsOf<EmbeddingGradAttrs>(call);
  const ne = grad.shape[grad.rank - 1]!;
  const values = (await gpu.hostValues(ids)).toInt32Array();
  const bad = findBadIndex(call, "ids", values, ids.shape, nv, "token id");
  if (bad) throw bad;
  const out = gpu.alloc([nv, ne]);
  if (out.size === 0) return out;
  const index = positionsById(values, nv);
  const csr = gpu.alloc([index.length], "int32");
  try {
    // Queue order: the index is written before the program that reads it runs.
    gpu.device.queue.writeBuffer(csr.storage.buffer, 0, index);
    await gpu.run(program(grad, csr, nv, ne, out));
  } finally {
    gpu.release(csr);
  }
  return out;
};
