// mask: −∞ where causal (with alignment), a sliding window or key padding hides the key (composed by "or"), with the
// CPU executor's rule and padding check (same errors, thrown before anything is written). May run in place. With a
// signal, a big call runs in chunks of rows (chunks.ts).
import { chunkedKernel, overRows } from "../chunks.js";
import { checkKeyPadding, checkMaskAttrs, expectRank, maskOffset, optionalInput, requireInput, windowOf, writeInPlaceChunked } from "./adapter.js";

/** Inputs: scores [B, H, L, S], optional keyPaddingMask [B, S] → [B, H, L, S]; attrs { causal, window, alignment }. */
export const maskKernel = chunkedKernel((call, ctx) => {
  const scores = requireInput(call, 0, "scores");
  const pad = optionalInput(call, 1, "keyPaddingMask");
  const attrs = checkMaskAttrs(call);
  expectRank(call, "scores", scores, 4, "[B, H, L, S]");
  const [nb, nh, nl, ns] = scores.shape as [number, number, number, number];
  if (pad !== undefined) checkKeyPadding(call, ctx, pad, nb, ns, "scores");
  const [s0, s1, s2, s3] = scores.strides as [number, number, number, number];
  return writeInPlaceChunked(call, ctx, scores, (dst) => {
    if (dst.size === 0) return undefined;
    const off = maskOffset(attrs.alignment, nl, ns);
    const [ps0, ps1] = pad === undefined ? [0, 0] : (pad.strides as [number, number]);
    const part = (r0: number, r1: number) =>
      ctx.exports.mask(scores.address, s0, s1, s2, s3, pad?.address ?? 0, ps0, ps1, nb, nh, nl, ns, attrs.causal ? 1 : 0, off, windowOf(attrs), dst.address, r0, r1);
    return overRows(call, ctx, nb * nh * nl, ns * MASK_WORK, part);
  });
});

/** Work per element in multiply-adds of the SIMD matmul: a scalar strided copy with a compare (measured ≈ 20, Node 20). */
const MASK_WORK = 20;
