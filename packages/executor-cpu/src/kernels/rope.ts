// rope: rotary position embedding on queries or keys after the heads are split, split-half convention (GPT-NeoX,
// Llama, Hugging Face `rotate_half`): dim i turns with dim i + r/2. GPT-J's interleaved pairs (2i, 2i + 1) differ.
import { Tensor } from "@attngraph/tensor";
import type { RopeAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { requireInput, attrsOf } from "./adapter.js";
import type { StridedView } from "./strided.js";

/**
 * For p = positionOffset + l and i < r/2: θ = p · base^(−2i/r), and the pair (x[i], x[i + r/2]) is rotated by θ;
 * dims r..D−1 are copied. Angles, cos and sin in float64 (float32 angles lose the low bits at large positions).
 * @param x [B, H, L, D], any strides
 * @param r rotated dims, even and <= D (already checked)
 * @param inverse rotate by −θ (sin flips sign): the rotation's transpose, which is RoPE's backward
 * @returns [B, H, L, D], row-major
 */
export function ropeImpl(
  x: StridedView,
  base: number,
  r: number,
  positionOffset: number,
  inverse = false,
): Float32Array {
  const [nb, nh, nl, nd] = x.shape as readonly number[] as [number, number, number, number];
  const [s0, s1, s2, s3] = x.strides as [number, number, number, number];
  const half = r / 2;
  const invFreq = Float64Array.from({ length: half }, (_, i) => base ** ((-2 * i) / r));
  // cos/sin per (position, frequency), shared by every batch and head.
  const cos = new Float64Array(nl * half);
  const sin = new Float64Array(nl * half);
  for (let l = 0; l < nl; l++) {
    for (let i = 0; i < half; i++) {
      const theta = (positionOffset + l) * invFreq[i]!;
      cos[l * half + i] = Math.cos(theta);
      sin[l * half + i] = inverse ? -Math.sin(theta) : Math.sin(theta);
    }
  }
  const xd = x.data;
  const out = new Float32Array(nb * nh * nl * nd);
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      for (let l = 0; l < nl; l++) {
        const row = x.offset + b * s0 + h * s1 + l * s2;
        const o = ((b * nh + h) * nl + l) * nd;
        for (let i = 0; i < half; i++) {
          const x1 = xd[row + i * s3]!;
          const x2 = xd[row + (i + half) * s3]!;
          const c = cos[l * half + i]!;
          const s = sin[l * half + i]!;
          out[o + i] = x1 * c - x2 * s;
          out[o + i + half] = x2 * c + x1 * s;
        }
        for (let d = r; d < nd; d++) out[o + d] = xd[row + d * s3]!;
      }
    }
  }
  return out;
}

/** Input: x [B, H, L, D]; attrs { base, rotaryDim, positionOffset, inverse } → [B, H, L, D]. */
export const ropeKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  const { base, rotaryDim, inverse } = attrsOf<RopeAttrs>(call);
  const positionOffset = attrsOf<{ positionOffset: number }>(call).positionOffset; // bound and in range: checkCall
  return new Tensor(ropeImpl(x, base, rotaryDim ?? x.shape[3]!, positionOffset, inverse), x.shape);
};
