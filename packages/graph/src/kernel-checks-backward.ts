// The kernel checks of the backward ops (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, the layer norms' and
// gelu's gradients, cross-entropy-grad): shapes and attributes, each error naming `<node>.<field>` (see kernel-checks.ts).
import { ShapeError, formatShape, sameShape, type Shape } from "@attngraph/tensor";
import type { CallInfo, Shaped } from "./kernel-checks.js";

// ---- backward ops (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, layer-norm(-weight)-grad, gelu-grad,
// embedding-grad, cross-entropy-grad) ----

/** `got` must have exactly `expected`'s shape (the paired operands of a backward or optimizer op): names `<node>.<name>`. */
export function expectSameShape(call: CallInfo, name: string, expected: Shaped, got: Shaped): void {
  if (!sameShape(expected.shape, got.shape))
    throw new ShapeError(
      `${call.node}.${name}`,
      "shape must match",
      formatShape(expected.shape),
      formatShape(got.shape),
    );
}

/**
 * sum-to's result shape (the call's outShape): x's shape with leading axes dropped and/or dims replaced by 1, lined up
 * from the last axis; else a shape error naming `<node>.shape`.
 */
export function checkSumToShape(call: CallInfo & { readonly outShape: Shape }, x: Shaped): Shape {
  const shape = call.outShape;
  if (shape.length > x.shape.length)
    throw new ShapeError(
      `${call.node}.shape`,
      "sum-to cannot add axes",
      `rank <= ${x.shape.length}`,
      formatShape(shape),
    );
  const lead = x.shape.length - shape.length;
  shape.forEach((d, i) => {
    const xd = x.shape[lead + i]!;
    if (d !== 1 && d !== xd)
      throw new ShapeError(
        `${call.node}.shape`,
        `dim ${i} must equal x's or be 1`,
        `${xd} or 1`,
        `${d} in ${formatShape(shape)}`,
      );
  });
  return shape;
}
