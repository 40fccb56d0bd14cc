// A kernel's output: a new tensor of the call's outShape (checkCall held it to the shape the op's rule gives), written by
// one program. Most kernels end this way.
import type { KernelContext, WebGpuKernel } from "../kernel-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { type Call, attrsOf } from "./inputs.js";

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

/**
 * The kernel most ops have: read the checked call's inputs (an absent optional one as undefined, a caller's null too)
 * and attributes, and write the output by the one program `make` describes. `I` is the inputs' tuple as the op declares
 * them (checkCall has held each present one to it). `check` throws for what only the values show (a step count from
 * the host), before anything is allocated.
 */
export function programKernel<A extends object, I extends readonly (GpuTensor | undefined)[]>(
  make: (inputs: I, attrs: A, out: GpuTensor) => ProgramInfo,
  check?: (call: Call, inputs: I) => void,
): WebGpuKernel {
  return async (call, gpu) => {
    const inputs = call.inputs.map((v) => v ?? undefined) as unknown as I;
    const attrs = attrsOf<A>(call);
    check?.(call, inputs);
    return writeOutput(call, gpu, (out) => make(inputs, attrs, out));
  };
}
