// Float64 reference of the alibi op, written from the ALiBi paper (Press et al., "Train Short, Test Long") and its
// reference `get_slopes`, never from an executor. Legend: B batch, H heads, L query length, S key length.
import { AttnGraphError, describe } from "@attngraph/tensor";

/** ALiBi attributes, as the alibi op takes them. */
export interface Alibi64 {
  /** One slope per head; null = the paper's slopes for H heads (alibiSlopes64). */
  readonly slopes: readonly number[] | null;
  /** The score scale, applied to the scores before the bias is added. */
  readonly scale: number;
  /** "top-left": query i sits at key position i; "bottom-right": at i + S − L. */
  readonly alignment: "top-left" | "bottom-right";
}

/**
 * The paper's `get_slopes(n)`, line for line: a geometric sequence starting at and multiplied by 2^(−8/n) when n is a
 * power of two; otherwise that sequence for the closest lower power of two, followed by every other element of the
 * sequence for twice that power (`[0::2]`), cut to n.
 */
export function alibiSlopes64(n: number): number[] {
  const powerOf2 = (m: number): number[] => {
    const start = 2 ** -(2 ** -(Math.log2(m) - 3));
    const ratio = start;
    return Array.from({ length: m }, (_, i) => start * ratio ** i);
  };
  if (Number.isInteger(Math.log2(n))) return powerOf2(n);
  const closest = 2 ** Math.floor(Math.log2(n));
  return [
    ...powerOf2(closest),
    ...alibiSlopes64(2 * closest)
      .filter((_, i) => i % 2 === 0)
      .slice(0, n - closest),
  ];
}

/**
 * scores [B, H, L, S] → scale · scores + m_h · (j − i_pos), i_pos = i (top-left) or i + S − L (bottom-right). A score of
 * −∞ (masked) stays −∞.
 */
export function alibi64(scores: Float64Array, B: number, H: number, L: number, S: number, a: Alibi64): Float64Array {
  const slopes = a.slopes ?? alibiSlopes64(H);
  if (slopes.length !== H)
    throw new AttnGraphError("validation", describe("alibi.slopes", "one slope per head", `${H}`, `${slopes.length}`));
  const out = new Float64Array(scores.length);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++) {
        const pos = a.alignment === "bottom-right" ? i + S - L : i;
        for (let j = 0; j < S; j++) {
          const k = ((b * H + h) * L + i) * S + j;
          const s = scores[k]!;
          out[k] = s === -Infinity ? -Infinity : a.scale * s - slopes[h]! * (pos - j);
        }
      }
  return out;
}
