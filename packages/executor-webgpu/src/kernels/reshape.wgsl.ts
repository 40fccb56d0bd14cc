// reshape: a view with the new shape where strides can express it, else a dense copy (copy.wgsl.ts) viewed with it.
// The view-or-copy rule is the tensor package's (`viewStrides`, the rule of Tensor.reshape), so every executor copies
// in exactly the same cases (e.g. merging the heads of a permuted [B, L, H, D] context).
import { checkReshapeSize } from "@attngraph/graph";
import { viewStrides } from "@attngraph/tensor";
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";

/** Input: x → `call.outShape`, the concrete shape bound from `attrs.shape`. */
export const reshapeKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0); // a view keeps the dtype of what it views
  const shape = call.outShape;
  checkReshapeSize(call, x);
  const strides = viewStrides(x.shape, x.strides, shape);
  if (strides) return gpu.view(x, shape, strides, x.offset);
  const dense = await gpu.contiguous(x);
  const out = gpu.view(dense, shape);
  gpu.release(dense);
  return out;
};
