// layer-norm: nn.LayerNorm over the last axis, in float64 in the module (assembly/layer-norm.ts: two-pass, f64x2
// lanes on dense rows; a constant row gives exactly the bias). x may be any view; weight and bias are optional [E].
// May run in place (the op declares inPlace: 0). With a signal, a big call runs in chunks of rows (chunks.ts).
import type { LayerNormAttrs } from "@attngraph/graph";
import { chunkedKernel } from "../chunks.js";
import { attrsOf, optionalInput, requireInput } from "./adapter.js";
import type { WasmContext } from "../context.js";
import { inPlaceRows } from "./in-place-rows.js";

/** Inputs: x [..., E], optional weight [E], optional bias [E]; attrs { eps } → [..., E]. */
export const layerNormKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const w = optionalInput(call, 1, "weight");
  const b = optionalInput(call, 2, "bias");
  const { eps } = attrsOf<LayerNormAttrs>(call);
  return inPlaceRows(call, ctx, x, LAYER_NORM_WORK, (dst, r0, r1) =>
    ctx.exports.layerNorm(
      x.address,
      ctx.desc(x),
      dst.address,
      writeAffine(ctx, ctx.params, eps, w?.address ?? 0, w?.strides[0] ?? 0, b?.address ?? 0, b?.strides[0] ?? 0),
      r0,
      r1,
    ),
  );
});

/**
 * Work per element in multiply-adds of the SIMD matmul: three float64 passes (measured ≈ 18 on dense rows, Node 20; a
 * row strided across cache lines costs up to 10× that, still well inside a chunk's budget for any realistic E).
 */
export const LAYER_NORM_WORK = 20;

/** AffineParams' fields in the module's order (assembly/layer-norm.ts): `eps` a float64 at 0, then these 4 bytes each from byte 8. */
export const AFFINE_FIELDS = ["eps", "w", "ws", "b", "bs"] as const;

/** Writes an AffineParams block at `address` (8-byte aligned) and returns the address, for the call right after. */
export function writeAffine(
  ctx: WasmContext,
  address: number,
  eps: number,
  w: number,
  ws: number,
  b: number,
  bs: number,
): number {
  ctx.f64()[address >> 3] = eps;
  const i32 = ctx.i32();
  const at = (address + 8) >> 2;
  i32[at] = w;
  i32[at + 1] = ws;
  i32[at + 2] = b;
  i32[at + 3] = bs;
  return address;
}
