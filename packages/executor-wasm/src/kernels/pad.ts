// pad: x with `before` zeros and `after` zeros along one axis (the gradient of a slice), one pass in the module
// (assembly/sum-to.ts `pad`): x's rows (any view) copied in order, the zeros written around each slice x[o, ...] before
// the padded axis.
import type { PadAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrsOf, filling, product, requireInput } from "./adapter.js";

/** Input: x [...]; attrs { axis (negative counts from the end), before, after } → x with dim `axis` = before + d + after. */
export const padKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { axis, before, after } = attrsOf<PadAttrs>(call);
  const r = x.rank;
  const a = axis < 0 ? axis + r : axis;
  const out = ctx.output(call, call.outShape); // x with dim a = before + d + after, by the shape rule
  return filling(call, ctx, out, () => {
    if (out.size === 0) return;
    if (x.size === 0) {
      ctx.exports.zero(out.address, out.size * 4);
      return;
    }
    // Slices x[o, ...] before the axis are `rpc` rows of x each (rows along its last axis, n long).
    const inner = product(x.shape.slice(a + 1));
    const rpc = (x.shape[a]! * inner) / x.shape[r - 1]!;
    ctx.exports.pad(x.address, ctx.desc(x), out.address, rpc, before * inner, after * inner);
  });
};
