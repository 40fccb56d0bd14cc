// reshape: a view with a new shape where the layout allows one (the rule torch.view uses, as Tensor.reshape), else a
// dense copy in the module.
import { ShapeError, contiguousStrides, formatShape, sizeOf, type Shape } from "@attngraph/tensor";
import type { WasmKernel } from "../executor.js";
import { requireInput } from "./adapter.js";

/** Input: x → `call.outShape` (same element count), e.g. split heads [B, L, E] → [B, L, H, D]. */
export const reshapeKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const shape = call.outShape;
  if (sizeOf(shape) !== x.size || shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new ShapeError(`${call.node}.shape`, "element count must stay the same", `a shape of ${x.size} elements`, `${formatShape(shape)} from ${formatShape(x.shape)}`);
  }
  const strides = viewStrides(x.shape, x.strides, shape);
  if (strides !== undefined) return ctx.view(x, shape, strides);
  const out = ctx.alloc(shape, `${call.node} (reshape copy)`);
  ctx.copy(x, out);
  return out;
};

/**
 * Strides that present (shape, strides) as `target` without copying, or undefined when impossible: dims are grouped
 * into runs that are dense among themselves, and each target dim must fall inside one run. The same rule as
 * @attngraph/tensor's Tensor.reshape, so both executors copy in the same cases.
 */
export function viewStrides(shape: Shape, strides: readonly number[], target: Shape): number[] | undefined {
  if (sizeOf(target) === 0) return contiguousStrides(target);
  const src = shape.map((d, i) => [d, strides[i]!] as const).filter(([d]) => d !== 1);
  const out = new Array<number>(target.length);
  let si = src.length - 1;
  let ti = target.length - 1;
  while (ti >= 0) {
    if (si < 0) {
      if (target[ti] !== 1) return undefined;
      out[ti--] = 1;
      continue;
    }
    let runSize = src[si]![0];
    const runStride = src[si]![1];
    let sj = si - 1;
    while (sj >= 0 && src[sj]![1] === src[sj + 1]![1] * src[sj + 1]![0]) {
      runSize *= src[sj]![0];
      sj--;
    }
    let acc = 1;
    while (ti >= 0 && acc < runSize) {
      out[ti] = runStride * acc;
      acc *= target[ti]!;
      ti--;
    }
    if (acc !== runSize) return undefined;
    while (ti >= 0 && target[ti] === 1 && sj < 0) out[ti--] = 1;
    si = sj;
  }
  return si < 0 ? out : undefined;
}
