import { formatDims, sameSize, type Dim } from "../dims.js";
import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface ReshapeAttrs {
  /** The new shape; names refer to symbolic dims (e.g. ["B", "T", 2, 4]). */
  readonly shape: readonly Dim[];
}

/** A view with a new shape and the same element count (split or merge heads); copied only if the layout forbids a view. */
export const reshapeOp = defineOp<ReshapeAttrs>({
  kind: "reshape",
  doc: "View with a new shape of the same element count (split/merge heads); copies only when the layout forbids a view.",
  inputs: [{ name: "x" }],
  attrs: { shape: { type: "dims", doc: "target shape; names are symbolic dims" } },
  view: true,
  inferShape: ([x], { shape }, ctx) => {
    // No -1 here: with symbolic dims the inferred size is not always a whole dim, so the target is spelled out.
    if (!shape.every((d) => typeof d === "string" || d >= 0)) {
      ctx.fail("shape", "dims must be non-negative integers or dim names", 'e.g. ["B", "T", 2, 4]', formatDims(shape));
    }
    if (!sameSize(x!, shape))
      ctx.fail(
        "shape",
        "element count must stay the same",
        `a shape with the size of ${formatDims(x!)}`,
        formatDims(shape),
      );
    return shape;
  },
  // A reshape moves no element: its gradient is the output's gradient in the input's shape.
  vjp: (ctx) => [ctx.addGrad(0, "reshape", { x: gradOf(ctx, "reshape") }, { shape: [...ctx.shapeOf(ctx.inputs[0]!)] })],
});
