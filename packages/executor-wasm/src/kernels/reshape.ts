// reshape: a view with a new shape where the layout allows one (the rule torch.view uses: the tensor package's
// viewStrides, so every executor copies in the same cases), else a dense copy in the module.
import { ShapeError, contiguousStrides, formatShape, sizeOf, viewStrides } from "@attngraph/tensor";
import type { WasmKernel } from "../executor.js";
import { viewInput } from "./adapter.js";

/** Input: x → `call.outShape` (same element count), e.g. split heads [B, L, E] → [B, L, H, D]. */
export const reshapeKernel: WasmKernel = (call, ctx) => {
  const x = viewInput(call);
  // The shape rule leaves a named dim of the attribute unchecked: outShape, where the runtime bound it, is checked here.
  const shape = call.outShape;
  if (sizeOf(shape) !== x.size || shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new ShapeError(
      `${call.node}.shape`,
      "element count must stay the same",
      `a shape of ${x.size} elements`,
      `${formatShape(shape)} from ${formatShape(x.shape)}`,
    );
  }
  // A dense input (the usual case: a projection's output) is a view with the target's own row-major strides.
  const strides = x.dense ? contiguousStrides(shape) : viewStrides(x.shape, x.strides, shape);
  if (strides !== undefined) return ctx.view(x, shape, strides);
  const out = ctx.alloc(shape, `${call.node} (reshape copy)`);
  ctx.copy(x, out);
  return out;
};
