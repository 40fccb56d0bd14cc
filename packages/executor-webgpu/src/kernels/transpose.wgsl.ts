// transpose: permute axes as a view (new shape and strides over the same buffer); nothing moves on the GPU.
import type { TransposeAttrs } from "@attngraph/graph";
import type { WebGpuKernel } from "../executor.js";
import { attrsOf, input } from "./inputs.js";

/** Input: x; attrs { perm } → x permuted (output dim i is input dim perm[i]), a view. */
export const transposeKernel: WebGpuKernel = (call, gpu) => {
  const x = input(call, 0); // a view keeps the dtype of what it views
  const { perm } = attrsOf<TransposeAttrs>(call);
  return gpu.view(
    x,
    perm.map((i) => x.shape[i]!),
    perm.map((i) => x.strides[i]!),
    x.offset,
  );
};
