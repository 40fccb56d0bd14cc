// add and mul: a + b and a · b with NumPy broadcasting, over any strides (mul: the gate of a SiLU-gated MLP). Both inputs are read as views of the output's shape: an axis
// an input lacks or holds once (a dim of 1) gets stride 0 (`broadcastStrides`), so one elementwise program serves a
// residual (same shapes), a bias [E] over [B, T, E] and a positional embedding [1, T, E] over the batch.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { input } from "./inputs.js";
import { writeOutput } from "./output.js";
import { storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph: the broadcast rule).
import { broadcastStrides } from "@attngraph/graph";

/** The ops this program serves, by kind, with their WGSL operator. */
const OPERATORS = { add: "+", mul: "*" } as const;

/** Params: n, a and b as views of the output shape. One invocation per output element. */
function program(
  op: keyof typeof OPERATORS,
  a: GpuTensor,
  b: GpuTensor,
  shape: readonly number[],
  out: GpuTensor,
): ProgramInfo {
  const p = elementwiseParams(out.size);
  const av = p.view({ shape, strides: broadcastStrides(a.shape, a.strides, shape), offset: a.offset });
  const bv = p.view({ shape, strides: broadcastStrides(b.shape, b.strides, shape), offset: b.offset });
  return elementwiseProgram({
    name: op,
    params: p,
    bindings: storageBindings(["A", "B"]),
    body: /* wgsl */ `  Y[i] = A[view_at(${av}u, i)] ${OPERATORS[op]} B[view_at(${bv}u, i)];`,
    inputs: [a, b],
    output: out,
  });
}

/** The kernel of `op`. Inputs: a [...], b [...] broadcastable with a → the broadcast shape (`call.outShape`). */
export function broadcastKernel(op: keyof typeof OPERATORS): WebGpuKernel {
  return async (call, gpu) => {
    const a = input(call, 0);
    const b = input(call, 1);
    // The declaration's rule made outShape the broadcast shape of a and b.
    return writeOutput(call, gpu, (out) => program(op, a, b, out.shape, out));
  };
}

export const addKernel: WebGpuKernel = broadcastKernel("add");
