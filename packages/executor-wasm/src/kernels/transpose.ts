// transpose: permute axes as a view (new shape and strides over the same block); consumers read strided inputs.
import type { TransposeAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrsOf, viewInput } from "./adapter.js";

/** Input: x; attrs { perm } → x permuted (output dim i is input dim perm[i]; outShape, by the shape rule). */
export const transposeKernel: WasmKernel = (call, ctx) => {
  const x = viewInput(call);
  const { perm } = attrsOf<TransposeAttrs>(call);
  return ctx.view(
    x,
    call.outShape,
    perm.map((p) => x.strides[p]!),
  );
};
