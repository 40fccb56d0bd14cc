import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";

export interface PadAttrs {
  readonly axis: number;
  /** Zeros before x along the axis. */
  readonly before: number;
  /** Zeros after x along the axis. */
  readonly after: number;
}

/**
 * x with zeros before and after it along one axis: the gradient of a slice (one third of a fused QKV projection's
 * gradient is the queries' gradient padded with zeros where keys and values sit). x [...] → the axis `before + d +
 * after` long.
 */
export const padOp = defineOp<PadAttrs>({
  kind: "pad",
  doc: "Zeros before and after x along one axis (the gradient of a slice).",
  inputs: [{ name: "x" }],
  attrs: {
    axis: { type: "integer", doc: "negative counts from the end" },
    before: { type: "integer", min: 0 },
    after: { type: "integer", min: 0 },
  },
  inferShape: ([x], { axis, before, after }, ctx) => {
    const r = x!.length;
    const a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r) ctx.fail("axis", "axis out of range", `-${r}..${r - 1}`, String(axis));
    const d = x![a]!;
    if (typeof d === "string") {
      if (before + after === 0) return x!;
      ctx.fail("axis", "pad needs a known length on its axis", "a numeric dim", `${d} in ${formatDims(x!)}`);
    }
    const length = before + (d as number) + after; // numeric: a symbolic d returned or failed above
    return x!.map((v, i) => (i === a ? length : v));
  },
});
