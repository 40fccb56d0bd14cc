// alibi: the score scale plus ALiBi's linear bias, m_h · (j − i), in one pass (float64, as the CPU executor).
import { alibiSlopes, type AlibiAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { writeRows4 } from "./rope.js";
import { attrError, expectRank, maskOffset, requireInput } from "./adapter.js";

/** Input: scores [B, H, L, S]; attrs { slopes, scale, alignment } → [B, H, L, S]. */
export const alibiKernel: WasmKernel = (call, ctx) => {
  const scores = requireInput(call, 0, "scores");
  expectRank(call, "scores", scores, 4, "[B, H, L, S]");
  const { scale, alignment } = call.attrs as Partial<AlibiAttrs>;
  const given = (call.attrs as Partial<AlibiAttrs>).slopes ?? null;
  const [nb, nh, nl, ns] = scores.shape as [number, number, number, number];
  if (typeof scale !== "number" || !Number.isFinite(scale)) throw attrError(call, "scale", "a finite number", scale);
  if (alignment !== "top-left" && alignment !== "bottom-right")
    throw attrError(call, "alignment", '"top-left" or "bottom-right"', alignment);
  if (given !== null) {
    if (!Array.isArray(given) || !given.every((m) => typeof m === "number" && Number.isFinite(m))) {
      throw attrError(call, "slopes", "null or an array of finite numbers", given);
    }
    if (given.length !== nh) throw attrError(call, "slopes", `${nh} slopes (one per head H)`, given);
  }
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
