// transpose: permute axes as a view (new shape and strides over the same buffer); nothing moves on the GPU.
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";
import { attrError } from "@attngraph/graph";

/** Input: x; attrs { perm } → x permuted (output dim i is input dim perm[i]), a view. */
export const transposeKernel: WebGpuKernel = (call, gpu) => {
  const x = input(call, 0); // a view keeps the dtype of what it views
  const perm = call.attrs["perm"];
  const r = x.rank;
  const ok =
    Array.isArray(perm) &&
    perm.length === r &&
    new Set(perm).size === r &&
    perm.every((p) => Number.isInteger(p) && p >= 0 && p < r);
  if (!ok) throw attrError(call, "perm", `a permutation of 0..${r - 1}`, perm);
  const p = perm as number[];
  return gpu.view(
    x,
    p.map((i) => x.shape[i]!),
    p.map((i) => x.strides[i]!),
    x.offset,
  );
};
