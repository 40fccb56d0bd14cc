// transpose: permute axes as a view (new shape and strides over the same block); consumers read strided inputs.
import type { TransposeAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrError, requireInput } from "./adapter.js";

/** Input: x; attrs { perm } → x permuted (output dim i is input dim perm[i]). */
export const transposeKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { perm } = call.attrs as Partial<TransposeAttrs>;
  const r = x.rank;
  const ok = Array.isArray(perm) && perm.length === r && new Set(perm).size === r && perm.every((p) => Number.isInteger(p) && p >= 0 && p < r);
  if (!ok) throw attrError(call, "perm", `a permutation of 0..${r - 1}`, perm);
  return ctx.view(x, perm.map((p) => x.shape[p]!), perm.map((p) => x.strides[p]!));
};
