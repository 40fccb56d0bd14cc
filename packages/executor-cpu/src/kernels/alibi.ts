// alibi: the score scale plus ALiBi's linear bias, m_h · (j − i), in one pass over the scores. The scale lives here
// (not in the softmax) because ALiBi adds its bias after scaling: softmax(q·kᵀ/√D + m·(j − i)).
import { Tensor } from "@attngraph/tensor";
import { alibiSlopes, type AlibiAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { requireInput, attrsOf } from "./adapter.js";
import type { StridedView } from "./strided.js";

/**
 * scale · scores + slopes[h] · (j − (i + off)), with off = 0 ("top-left") or S − L ("bottom-right"); computed in
 * float64, stored as float32. −∞ stays −∞ whatever the scale (0 · −∞ would be NaN); NaN propagates.
 * @param scores [B, H, L, S], any strides
 * @param slopes H numbers, one per head (already checked)
 * @returns [B, H, L, S], row-major
 */
export function alibiImpl(
  scores: StridedView,
  slopes: readonly number[],
  scale: number,
  alignment: AlibiAttrs["alignment"],
): Float32Array {
  const [nb, nh, nl, ns] = scores.shape as readonly number[] as [number, number, number, number];
  const [s0, s1, s2, s3] = scores.strides as [number, number, number, number];
  const off = alignment === "bottom-right" ? ns - nl : 0;
  const sd = scores.data;
  const out = new Float32Array(nb * nh * nl * ns);
  let o = 0;
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      const m = slopes[h]!;
      for (let i = 0; i < nl; i++) {
        const row = scores.offset + b * s0 + h * s1 + i * s2;
        const pos = i + off; // the query's key position
        for (let j = 0; j < ns; j++) {
          const v = sd[row + j * s3]!;
          out[o++] = v === -Infinity ? -Infinity : scale * v + m * (j - pos);
        }
      }
    }
  }
  return out;
}

/** Input: scores [B, H, L, S]; attrs { slopes, scale, alignment } → [B, H, L, S]. */
export const alibiKernel: CpuKernel = (call) => {
  const scores = requireInput(call, 0, "scores");
  const { slopes, scale, alignment } = attrsOf<AlibiAttrs>(call);
  return new Tensor(alibiImpl(scores, slopes ?? alibiSlopes(scores.shape[1]!), scale, alignment), scores.shape);
};
