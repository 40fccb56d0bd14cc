// transpose: permute axes as a view (new shape and strides over the same buffer). Consumers read strided inputs, so
// the data is never moved here.
import type { TransposeAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { attrError, requireInput, toTensor } from "./adapter.js";
import type { StridedView } from "./strided.js";

/** Output dim i is input dim perm[i]. `perm` must be a permutation of the axes (the adapter checks). */
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
  const { perm } = call.attrs as Partial<TransposeAttrs>;
  const r = x.rank;
  const ok =
    Array.isArray(perm) &&
    perm.length === r &&
    new Set(perm).size === r &&
    perm.every((p) => Number.isInteger(p) && p >= 0 && p < r);
  if (!ok) throw attrError(call, "perm", `a permutation of 0..${r - 1}`, perm);
  return toTensor(transposeImpl(x, perm));
};
