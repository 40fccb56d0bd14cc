// Float64 reference of the rope op, written from the RoFormer paper's complex form in the split-half layout of
// GPT-NeoX / Llama (Hugging Face `rotate_half`), never from an executor: the pair (x[i], x[i + r/2]) is the complex
// number z = x[i] + i·x[i + r/2], and position p multiplies it by e^(i·p·ω_i) with ω_i = 1 / base^(2i/r).
// Legend: B batch, H heads, L length, D head dim.

/** RoPE attributes, as the rope op takes them. */
export interface Rope64 {
  readonly base: number;
  /** Rotated dims r (even, <= D); null = D. Dims past r are copied. */
  readonly rotaryDim: number | null;
  /** Position of row 0. */
  readonly positionOffset: number;
  /** Rotate by −θ (multiply by e^(−i·p·ω_i), the conjugate): the inverse rotation, which is also its transpose. */
  readonly inverse?: boolean;
}

/** x [B, H, L, D] (dense, row-major) → the same with each pair rotated by its position's angle (by minus it with `inverse`). */
export function rope64(x: Float64Array, B: number, H: number, L: number, D: number, a: Rope64): Float64Array {
  const r = a.rotaryDim ?? D;
  const half = r / 2;
  const sign = a.inverse === true ? -1 : 1;
  const out = Float64Array.from(x);
  for (let row = 0; row < B * H * L; row++) {
    const p = a.positionOffset + (row % L);
    for (let i = 0; i < half; i++) {
      const w = p / a.base ** ((2 * i) / r);
      const [re, im] = mulComplex([x[row * D + i]!, x[row * D + i + half]!], [Math.cos(w), sign * Math.sin(w)]);
      out[row * D + i] = re;
      out[row * D + i + half] = im;
    }
  }
  return out;
}

/** (a + ib)(c + id) */
function mulComplex([a, b]: readonly [number, number], [c, d]: readonly [number, number]): [number, number] {
  return [a * c - b * d, a * d + b * c];
}
