// transpose: permute axes as a view (new shape and strides over the same buffer). Consumers read strided inputs, so
// the data is never moved here.
import type { TransposeAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { requireInput, toTensor, attrsOf } from "./adapter.js";
import type { StridedView } from "./strided.js";

/** Output dim i is input dim perm[i]. `perm` must be a permutation of the axes (the shape rule checks). */
export function transposeImpl(x: StridedView, perm: readonly number[]): StridedView {
  return {
    data: x.data,
    shape: perm.map((p) => x.shape[p]!),
    strides: perm.map((p) => x.strides[p]!),
    offset: x.offset,
  };
}

/** Input: x; attrs { perm } → x permuted, e.g. [B, L, H, D] with perm [0, 2, 1, 3] → [B, H, L, D]. */
export const transposeKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  const { perm } = attrsOf<TransposeAttrs>(call);
  return toTensor(transposeImpl(x, perm));
};
