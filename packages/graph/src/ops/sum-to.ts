import { formatDims, sameDim } from "../dims.js";
import { defineOp } from "../op-def.js";

export interface SumToAttrs {
  /** The result's shape: x's shape with leading axes dropped and/or axes of 1 where x's are summed. */
  readonly shape: readonly (number | string)[];
}

/**
 * Sums x down to a shape it broadcasts from: the reverse of broadcasting (the gradient of a broadcast add, of a bias,
 * of a key/value head shared by a group of query heads). Shapes line up from the last axis; an axis x has and `shape`
 * lacks, or where `shape` has 1, is summed. x [...] → shape.
 */
export const sumToOp = defineOp<SumToAttrs>({
  kind: "sum-to",
  doc: "Sums x down to `shape` (x must broadcast from it): drops leading axes and sums axes where shape has 1; the reverse of broadcasting.",
  inputs: [{ name: "x", doc: "[...], a broadcast of `shape`" }],
  attrs: { shape: { type: "dims", doc: "the result's shape; names are symbolic dims" } },
  inferShape: ([x], { shape }, ctx) => {
    if (!shape.every((d) => typeof d === "string" || d >= 0))
      ctx.fail(
        "shape",
        "dims must be non-negative integers or dim names",
        'e.g. [16] or [1, "T", 16]',
        formatDims(shape),
      );
    if (shape.length > x!.length)
      ctx.fail("shape", "sum-to cannot add axes", `rank <= ${x!.length}`, formatDims(shape));
    const lead = x!.length - shape.length;
    shape.forEach((d, i) => {
      if (d !== 1 && !sameDim(d, x![lead + i]!))
        ctx.fail("shape", `dim ${i} must equal x's or be 1`, `${x![lead + i]} or 1`, `${d} in ${formatDims(shape)}`);
    });
    return shape;
  },
});
