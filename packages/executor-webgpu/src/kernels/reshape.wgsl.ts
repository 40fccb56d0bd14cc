// reshape: a view with the new shape where strides can express it, else a dense copy (copy.wgsl.ts) viewed with it.
// The view-or-copy rule is the tensor package's (`viewStrides`, the rule of Tensor.reshape), so every executor copies
// in exactly the same cases (e.g. merging the heads of a permuted [B, L, H, D] context).
import { ShapeError, formatShape, sizeOf, viewStrides } from "@attngraph/tensor";
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";

/** Input: x → `call.outShape`, the concrete shape bound from `attrs.shape`. */
export const reshapeKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0); // a view keeps the dtype of what it views
  const shape = call.outShape;
  // Kept from the declaration's rule: a shape attribute that names dims ("B", "T") reaches the kernel as names, bound
  // only in outShape, where checkCall cannot count elements.
  if (sizeOf(shape) !== x.size || shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new ShapeError(
      `${call.node}.shape`,
      "element count must stay the same",
      `a shape of ${x.size} elements`,
      `${formatShape(shape)} from ${formatShape(x.shape)}`,
    );
  }
  const strides = viewStrides(x.shape, x.strides, shape);
  if (strides) return gpu.view(x, shape, strides, x.offset);
  const dense = await gpu.contiguous(x);
  const out = gpu.view(dense, shape);
  gpu.release(dense);
  return out;
};
