// reshape: a view with a new shape where the layout allows one (the rule torch.view uses: the tensor package's
// viewStrides, so every executor copies in the same cases), else a dense copy in the module.
import { checkReshapeSize } from "@attngraph/graph";
import { contiguousStrides, viewStrides } from "@attngraph/tensor";
import type { WasmKernel } from "../executor.js";
import { viewInput } from "./adapter.js";

/** Input: x → `call.outShape` (same element count), e.g. split heads [B, L, E] → [B, L, H, D]. */
export const reshapeKernel: WasmKernel = (call, ctx) => {
  const x = viewInput(call);
  const shape = call.outShape;
  checkReshapeSize(call, x);
  // A dense input (the usual case: a projection's output) is a view with the target's own row-major strides.
  const strides = x.dense ? contiguousStrides(shape) : viewStrides(x.shape, x.strides, shape);
  if (strides !== undefined) return ctx.view(x, shape, strides);
  const out = ctx.alloc(shape, `${call.node} (reshape copy)`);
  ctx.copy(x, out);
  return out;
};
