// mask: −∞ where causal (with alignment offset `off`), a sliding window (`win` > 0) or key padding hides the key;
// the rule is the CPU executor's: query i sees keys lo < j <= hi by position.
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
 * Rows [r0, r1) of [B · H · L] of scores [B, H, L, S] (strides s0..s3), pad [B, S] of 0/1 (0 = none) → the same rows of
 * dst dense. dst may be src's own memory. Rows are independent, so a call may do any range of them (the host's chunks).
 */
export function mask(src: usize, s0: i32, s1: i32, s2: i32, s3: i32, pad: usize, ps0: i32, ps1: i32, nb: i32, nh: i32, nl: i32, ns: i32, causal: bool, off: i32, win: i32, dst: usize, r0: i32, r1: i32): void {
  let o = dst + (<usize>r0 * <usize>ns << 2);
  for (let r = r0; r < r1; r++) {
    const i = r % nl;
    const h = (r / nl) % nh;
    const b = r / (nl * nh);
    const first = max(0, lastWindowedKey(i, off, win) + 1);
    const end = max(first, min(ns, lastVisibleKey(i, off, causal, ns) + 1));
    const row = rowOf4(src, b, h, i, s0, s1, s2);
    let j: i32 = 0;
    for (; j < first; j++, o += 4) store<f32>(o, -Infinity);
    for (; j < end; j++, o += 4) {
      const v = load<f32>(at(row, j * s3));
      store<f32>(o, pad != 0 && load<f32>(at(pad, b * ps0 + j * ps1)) == 1 ? -Infinity : v);
    }
    for (; j < ns; j++, o += 4) store<f32>(o, -Infinity);
  }
}
