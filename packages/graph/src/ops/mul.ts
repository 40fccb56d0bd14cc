import { BROADCAST_BINARY } from "./broadcast-binary.js";
import { defineOp } from "../op-def.js";
import { gradOf, sameShapeExactly, unbroadcast } from "../vjp-helpers.js";

export interface MulAttrs {}

/**
 * a · b elementwise with the broadcasting of `add` (shapes line up from the last axis, a dim of 1 or a missing leading
 * dim stretches): the gate product of Llama's MLP, silu(gate(x)) · up(x). a [...], b [...] → the broadcast shape.
 */
export const mulOp = defineOp<MulAttrs>({
  kind: "mul",
  doc: "a · b elementwise, with add's broadcasting (shapes aligned from the last axis, dims of 1 stretch): gated MLPs.",
  ...BROADCAST_BINARY,
  // d(a·b)/da = b: each side gets g times the other, summed over the axes it was broadcast along.
  vjp: (ctx) => {
    const g = gradOf(ctx, "mul");
    const [a, b] = ctx.inputs;
    const other = [b!, a!];
    return ctx.inputs.map((v, i) => {
      if (v === undefined || !ctx.needs(i)) return undefined;
      const inputs = { a: g, b: other[i]! };
      if (sameShapeExactly(ctx.shapeOf(g), ctx.shapeOf(v))) return ctx.addGrad(i, "mul", inputs);
      return unbroadcast(ctx, i, ctx.add("mul", `${i === 0 ? "a" : "b"}.full`, inputs), ctx.shapeOf(v));
    });
  },
});
