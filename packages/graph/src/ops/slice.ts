import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface SliceAttrs {
  readonly axis: number;
  /** First entry; negative counts from the end of the axis (torch.narrow's rule: −1 is the last entry). */
  readonly start: number;
  readonly size: number;
}

/** The slice's first entry on an axis of `dim` entries: a negative start counts from the end. */
export function sliceStart(start: number, dim: number): number {
  return start < 0 ? start + dim : start;
}

/**
 * A view of `size` entries of one axis from `start` (torch.narrow). Not one of the nine attention nodes: it is what
 * splits one fused QKV projection into queries, keys and values without a copy.
 */
export const sliceOp = defineOp<SliceAttrs>({
  kind: "slice",
  doc: "View of `size` entries along `axis` from `start` (torch.narrow); splits a fused QKV projection.",
  inputs: [{ name: "x" }],
  attrs: {
    axis: { type: "integer", doc: "axis to narrow; negative counts from the end" },
    start: { type: "integer", doc: "first entry; negative counts from the end (the last position: start −1, size 1)" },
    size: { type: "integer", min: 0 },
  },
  view: true,
  inferShape: ([x], { axis, start, size }, ctx) => {
    const r = x!.length;
    const a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r) ctx.fail("axis", "axis out of range", `-${r}..${r - 1}`, String(axis));
    const d = x![a]!;
    if (start < 0 && start + size > 0)
      ctx.fail("size", "a slice from the end runs past it", `start + size <= 0`, `${start} + ${size}`);
    if (typeof d === "number" && start < 0 && start + d < 0)
      ctx.fail("start", "slice starts before the axis", `start >= -${d}`, String(start));
    if (typeof d === "number" && start >= 0 && start + size > d)
      ctx.fail("size", "slice runs past the axis", `start + size <= ${d}`, `${start} + ${size}`);
    return x!.map((v, i) => (i === a ? size : v));
  },
  // The narrowed entries get the gradient; the rest of the axis gets 0 (a pad).
  vjp: (ctx) => {
    const x = ctx.shapeOf(ctx.inputs[0]!);
    const a = ctx.attrs.axis < 0 ? ctx.attrs.axis + x.length : ctx.attrs.axis;
    const d = x[a]!;
    if (typeof d !== "number") ctx.unsupported(`the gradient of a slice of a symbolic axis (${d})`);
    const start = sliceStart(ctx.attrs.start, d as number);
    return [
      ctx.addGrad(
        0,
        "pad",
        { x: gradOf(ctx, "slice") },
        { axis: a, before: start, after: (d as number) - start - ctx.attrs.size },
      ),
    ];
  },
});
