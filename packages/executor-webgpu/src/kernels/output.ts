// A kernel's output: a new tensor of the call's outShape (checkCall held it to the shape the op's rule gives), written by
// one program. Most kernels end this way.
import type { KernelContext } from "../kernel-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import type { Call } from "./inputs.js";

/**
 * A new tensor of `call.outShape`, written by the program `make(out)` describes: none runs for an empty output, and
 * the tensor is given back if making or running the program throws (a device limit reached while binding).
 */
export async function writeOutput(
  call: Call,
  gpu: KernelContext,
  make: (out: GpuTensor) => ProgramInfo,
): Promise<GpuTensor> {
  const out = gpu.alloc(call.outShape);
  if (out.size === 0) return out;
  try {
    await gpu.run(make(out));
  } catch (e) {
    gpu.release(out);
    throw e;
  }
  return out;
}
