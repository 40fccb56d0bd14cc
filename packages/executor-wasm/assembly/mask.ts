// mask: −∞ where causal (with alignment offset `off`), a sliding window (`win` > 0), key padding or a user 0/1 mask
// hides the key (composed by "or"); a visible score becomes scale · score + bias (float64, rounded once), except that
// a score already −∞ stays −∞ (a key hidden upstream stays hidden whatever the bias). The positional rule is the CPU
// executor's: query i sees keys lo < j <= hi by position.
import { at, rowOf4 } from "./strided";

/** Last key query i sees by position. */
@inline export function lastVisibleKey(i: i32, off: i32, causal: bool, ns: i32): i32 {
  return causal ? i + off : ns - 1;
}

/** Last key the window hides for query i (-1 without a window). */
@inline export function lastWindowedKey(i: i32, off: i32, win: i32): i32 {
  return win > 0 ? i + off - win : -1;
}

/**
 * mask's parameters, written field by field by name on the host (src/kernels/mask.ts, MASK_FIELDS: `scale` a float64
 * at 0, then the rest 4 bytes each in this declaration order); a test holds the offsets to the compiler's.
 * Scores [B, H, L, S] at src (strides s0..s3); pad [B, S] (strides ps0, ps1); user mask and bias (strides u0..u3,
 * b0..b3 over [B, H, L, S]); the counts B, H, L, S; causal 0 or 1, its offset and the window; dst.
 */
@unmanaged export class MaskParams {
  scale: f64;
  src: usize; s0: i32; s1: i32; s2: i32; s3: i32;
  pad: usize; ps0: i32; ps1: i32;
  user: usize; u0: i32; u1: i32; u2: i32; u3: i32;
  bias: usize; b0: i32; b1: i32; b2: i32; b3: i32;
  nb: i32; nh: i32; nl: i32; ns: i32; causal: i32; off: i32; win: i32;
  dst: usize;
}

/**
 * Rows [r0, r1) of [B · H · L] of scores [B, H, L, S] (strides s0..s3) → the same rows of dst, dense. pad [B, S] of
 * 0/1 (1 = padded key); user, a 0/1 mask (0 = hidden key), and bias, additive: both read at b·u0 + h·u1 + i·u2 + j·u3
 * (strides over [B, H, L, S], 0 where they broadcast). An absent input has address 0. dst may be src's own memory.
 * Rows are independent, so a call may do any range of them (the host's chunks). `p`: a MaskParams block.
 */
export function mask(p: MaskParams, r0: i32, r1: i32): void {
  // The fields read once into locals, so the loops below run as with positional parameters.
  const src = p.src, s0 = p.s0, s1 = p.s1, s2 = p.s2, s3 = p.s3;
  const pad = p.pad, ps0 = p.ps0, ps1 = p.ps1;
  const user = p.user, u0 = p.u0, u1 = p.u1, u2 = p.u2, u3 = p.u3;
  const bias = p.bias, b0 = p.b0, b1 = p.b1, b2 = p.b2, b3 = p.b3, scale = p.scale;
  const nh = p.nh, nl = p.nl, ns = p.ns, causal = p.causal != 0, off = p.off, win = p.win, dst = p.dst;
  // Without a user mask, a bias or a scale, visible scores are copied as they are (their bits, −0 included).
  const plain = user == 0 && bias == 0 && scale == 1;
  let o = dst + (<usize>r0 * <usize>ns << 2);
  for (let r = r0; r < r1; r++) {
    const i = r % nl;
    const h = (r / nl) % nh;
    const b = r / (nl * nh);
    // Visible by position: first <= j < end, both within [0, S] (a late query's window may start past the last key:
    // then the whole row is −∞, and nothing is written past it).
    const first = min(ns, max(0, lastWindowedKey(i, off, win) + 1));
    const end = max(first, min(ns, lastVisibleKey(i, off, causal, ns) + 1));
    const row = rowOf4(src, b, h, i, s0, s1, s2);
    const urow = at(user, b * u0 + h * u1 + i * u2);
    const brow = at(bias, b * b0 + h * b1 + i * b2);
    let j: i32 = 0;
    for (; j < first; j++, o += 4) store<f32>(o, -Infinity);
    for (; j < end; j++, o += 4) {
      const v = load<f32>(at(row, j * s3));
      if (pad != 0 && load<f32>(at(pad, b * ps0 + j * ps1)) == 1) store<f32>(o, -Infinity);
      else if (plain) store<f32>(o, v);
      else if ((user != 0 && load<f32>(at(urow, j * u3)) == 0) || v == -Infinity) store<f32>(o, -Infinity);
      else store<f32>(o, <f32>(scale * <f64>v + (bias != 0 ? <f64>load<f32>(at(brow, j * b3)) : 0)));
    }
    for (; j < ns; j++, o += 4) store<f32>(o, -Infinity);
  }
}
