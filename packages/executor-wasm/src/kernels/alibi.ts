// alibi: the score scale plus ALiBi's linear bias, m_h · (j − i), in one pass (float64, as the CPU executor).
import { alibiSlopes, maskOffset, type AlibiAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { writeRows4 } from "./rope.js";
import { attrsOf, requireInput } from "./adapter.js";

/** Input: scores [B, H, L, S]; attrs { slopes, scale, alignment } → [B, H, L, S]. */
export const alibiKernel: WasmKernel = (call, ctx) => {
  const scores = requireInput(call, 0, "scores");
  const { slopes: given, scale, alignment } = attrsOf<AlibiAttrs>(call);
  const [nb, nh, nl, ns] = scores.shape as [number, number, number, number];
  const slopes = given ?? alibiSlopes(nh);
  const out = ctx.alloc(scores.shape, `${call.node} (output of op alibi)`);
  if (out.size === 0) return out;
  const at = ctx.scratch(Math.max(1, nh) * 8, call.node);
  ctx.f64().set(slopes, at / 8);
  const [s0, s1, s2, s3] = scores.strides as [number, number, number, number];
  ctx.exports.alibi(
    writeRows4(ctx, ctx.params, [scores.address, s0, s1, s2, s3, nb, nh, nl]),
    ns,
    at,
    scale,
    maskOffset(alignment, nl, ns),
    out.address,
  );
  return out;
};
