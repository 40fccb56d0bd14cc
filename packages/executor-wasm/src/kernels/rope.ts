// rope: rotary position embedding, split-half convention (dim i turns with dim i + r/2; NeoX/Llama). The angle tables
// are computed here in float64 with the same expressions as the CPU executor, so both rotate by the same numbers.
// With `inverse` (RoPE's backward: the rotation's transpose) the sine table is negated, so the module rotates by −θ.
import type { RopeAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrsOf, requireInput } from "./adapter.js";
import type { WasmContext } from "../context.js";

/** Input: x [B, H, L, D]; attrs { base, rotaryDim, positionOffset, inverse } → [B, H, L, D]. */
export const ropeKernel: WasmKernel = (call, ctx) => {
  const x = requireInput(call, 0, "x");
  const { base, rotaryDim, inverse } = attrsOf<RopeAttrs>(call);
  const positionOffset = attrsOf<{ positionOffset: number }>(call).positionOffset; // bound and in range: checkCall
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  const r = rotaryDim ?? nd;
  const half = r / 2;
  const out = ctx.alloc(x.shape, `${call.node} (output of op rope)`);
  if (out.size === 0) return out;
  const tables = ctx.scratch(Math.max(1, nl * half) * 16, call.node);
  const f64 = ctx.f64();
  const cosAt = tables / 8;
  const sinAt = cosAt + nl * half;
  for (let i = 0; i < half; i++) {
    const invFreq = base ** ((-2 * i) / r);
    for (let l = 0; l < nl; l++) {
      const theta = (positionOffset + l) * invFreq;
      f64[cosAt + l * half + i] = Math.cos(theta);
      f64[sinAt + l * half + i] = inverse ? -Math.sin(theta) : Math.sin(theta);
    }
  }
  const [s0, s1, s2, s3] = x.strides as [number, number, number, number];
  ctx.exports.rope(
    writeRows4(ctx, ctx.params, [x.address, s0, s1, s2, s3, nb, nh, nl]),
    nd,
    r,
    cosAt * 8,
    sinAt * 8,
    out.address,
  );
  return out;
};

/** Rows4Params' fields in the module's order (assembly/position.ts; 4 bytes each, integers), shared by rope and alibi. */
export const ROWS4_FIELDS = ["src", "s0", "s1", "s2", "s3", "nb", "nh", "nl"] as const;

/** Writes a Rows4Params block at `address`: `values` in ROWS4_FIELDS' order. Returns the address. */
export function writeRows4(
  ctx: WasmContext,
  address: number,
  values: readonly [number, number, number, number, number, number, number, number],
): number {
  ctx.i32().set(values, address / 4);
  return address;
}
