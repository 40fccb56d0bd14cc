// transpose: permute axes as a view (new shape and strides over the same block); consumers read strided inputs.
import type { TransposeAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrError, requireInput } from "./adapter.js";

/** Input: x; attrs { perm } → x permuted (output dim i is input dim perm[i]). */
export const transposeKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { perm } = call.attrs as Partial<TransposeAttrs>;
  const r = x.rank;
  if (!isPermutation(perm, r)) throw attrError(call, "perm", `a permutation of 0..${r - 1}`, perm);
  const shape = new Array<number>(r);
  const strides = new Array<number>(r);
  for (let i = 0; i < r; i++) {
    shape[i] = x.shape[perm[i]!]!;
    strides[i] = x.strides[perm[i]!]!;
  }
  return ctx.view(x, shape, strides);
};

/** Whether `perm` is a permutation of 0..r-1 (each index once), without building a Set per call. */
function isPermutation(perm: unknown, r: number): perm is readonly number[] {
  if (!Array.isArray(perm) || perm.length !== r) return false;
  if (!perm.every((p: unknown) => Number.isInteger(p) && (p as number) >= 0 && (p as number) < r)) return false;
  if (r > 30) return new Set(perm).size === r;
  let seen = 0;
  for (const p of perm as number[]) {
    if (seen & (1 << p)) return false;
    seen |= 1 << p;
  }
  return true;
}
