// projection: y = x · Wᵀ + b over the last axis (nn.Linear layout), on the tiled matmul. out-proj is the same kernel.
// x's leading axes are read as one row stride when they collapse into one (dense, sliced, permuted with size-1 axes);
// otherwise x is first copied dense. W is read transposed through its strides. linear-gelu is this kernel with the
// matmul's gelu epilogue (linear-gelu.wgsl.ts).
import type { GeluAttrs } from "@attngraph/graph";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { leadingStride } from "@attngraph/tensor";
// Shared by every executor (@attngraph/tensor), re-exported where this package's matrix kernels always found it.
export { leadingStride };
import { optionalInput, input, type Call } from "./inputs.js";
import { matmulProgram } from "./matmul.wgsl.js";

/** The inputs of a linear op (projection, out-proj, linear-gelu): x, weight and the optional bias, each present. */
export function linearInputs(call: Call): { x: GpuTensor; w: GpuTensor; b: GpuTensor | undefined } {
  return { x: input(call, 0), w: input(call, 1), b: optionalInput(call, 2) };
}

/** Inputs: x [..., In], weight [Out, In], optional bias [Out] → [..., Out]. */
export const projectionKernel: WebGpuKernel = async (call, gpu) => {
  const { x, w, b } = linearInputs(call);
  return linear(call, gpu, x, w, b);
};

/**
 * x · Wᵀ + b (checked inputs) as a new [..., Out] tensor; with `gelu`, the matmul's gelu epilogue is applied to each
 * element before it is stored (linear-gelu).
 */
export async function linear(
  call: Call,
  gpu: KernelContext,
  input: GpuTensor,
  w: GpuTensor,
  b: GpuTensor | undefined,
  gelu?: GeluAttrs["approximate"],
): Promise<GpuTensor> {
  const nIn = input.shape[input.rank - 1]!;
  const nOut = w.shape[0]!;
  const rows = input.shape.slice(0, -1).reduce((a, d) => a * d, 1);
  let x = input;
  let rowStride = leadingStride(x);
  if (rowStride === undefined) {
    x = await gpu.contiguous(input);
    rowStride = nIn;
  }
  const out = gpu.alloc([...input.shape.slice(0, -1), nOut]);
  const xCol = x.rank === 0 ? 0 : x.strides[x.rank - 1]!;
  await gpu.run(
    matmulProgram(
      call.kind,
      { m: rows, n: nOut, k: nIn, batches: [1, 1], group: 1 },
      { t: x, offset: x.offset, batch: [0, 0], row: rowStride, col: xCol },
      { t: w, offset: w.offset, batch: [0, 0], row: w.strides[1]!, col: w.strides[0]! },
      b,
      out,
      gelu === undefined ? {} : { gelu },
    ),
  );
  if (x !== input) gpu.release(x);
  return out;
}
