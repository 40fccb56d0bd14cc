// Position encodings: rope (split-half rotary, angles as float64 tables from the host) and alibi (scale · s plus
// slope_h · (j − (i + off)), float64). Both write dense [B, H, L, ·] from any strides.
import { at, rowOf4 } from "./strided";

/**
 * The source both read, a block written field by field by name on the host (src/kernels/rope.ts, ROWS4_FIELDS, in
 * this declaration order, 4 bytes a field; a test holds the offsets to the compiler's): src [B, H, L, ·] with
 * strides s0..s3 and the counts B, H, L.
 */
@unmanaged export class Rows4Params {
  src: usize; s0: i32; s1: i32; s2: i32; s3: i32;
  nb: i32; nh: i32; nl: i32;
}

/** x [B, H, L, D] → dst; pairs (i, i + r/2) rotated by the angle tables cos/sin [L, r/2] (float64); dims ≥ r copied. */
export function rope(p: Rows4Params, nd: i32, r: i32, cos: usize, sin: usize, dst: usize): void {
  const src = p.src, s0 = p.s0, s1 = p.s1, s2 = p.s2, s3 = p.s3, nb = p.nb, nh = p.nh, nl = p.nl;
  const half = r >> 1;
  let o = dst;
  for (let b: i32 = 0; b < nb; b++) {
    for (let h: i32 = 0; h < nh; h++) {
      for (let l: i32 = 0; l < nl; l++, o += <usize>nd << 2) {
        const row = rowOf4(src, b, h, l, s0, s1, s2);
        const t = <usize>(l * half) << 3;
        for (let i: i32 = 0; i < half; i++) {
          const x1 = <f64>load<f32>(at(row, i * s3));
          const x2 = <f64>load<f32>(at(row, (i + half) * s3));
          const c = load<f64>(cos + t + (<usize>i << 3));
          const s = load<f64>(sin + t + (<usize>i << 3));
          store<f32>(o + (<usize>i << 2), <f32>(x1 * c - x2 * s));
          store<f32>(o + (<usize>(i + half) << 2), <f32>(x2 * c + x1 * s));
        }
        for (let d = r; d < nd; d++) store<f32>(o + (<usize>d << 2), load<f32>(at(row, d * s3)));
      }
    }
  }
}

/** scores [B, H, L, S] → dst: −∞ stays −∞, else scale · v + slopes[h] · (j − (i + off)) in float64. */
export function alibi(p: Rows4Params, ns: i32, slopes: usize, scale: f64, off: i32, dst: usize): void {
  const src = p.src, s0 = p.s0, s1 = p.s1, s2 = p.s2, s3 = p.s3, nb = p.nb, nh = p.nh, nl = p.nl;
  let o = dst;
  for (let b: i32 = 0; b < nb; b++) {
    for (let h: i32 = 0; h < nh; h++) {
      const m = load<f64>(slopes + (<usize>h << 3));
      for (let i: i32 = 0; i < nl; i++) {
        const row = rowOf4(src, b, h, i, s0, s1, s2);
        const pos = i + off;
        for (let j: i32 = 0; j < ns; j++, o += 4) {
          const v = <f64>load<f32>(at(row, j * s3));
          store<f32>(o, v == -Infinity ? -Infinity : <f32>(scale * v + m * <f64>(j - pos)));
        }
      }
    }
  }
}
