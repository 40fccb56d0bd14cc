// The products of a query block with one block of keys that the fused attention kernel (attention-steps) and its
// backward (attention-grad-steps) both run, written once so the backward recomputes the forward's numbers: the
// block's raw scores, and a block of weights (or dS) times the keys' rows, with the guard that keeps a key's NaN or
// ±∞ row from leaking through a weight of exactly 0.
import { microKernel, roundUp } from "./matmul.js";

/**
 * out[r · ldo + c] = Σ_d a[r, d] · k[s0 + c, d] for r < brp and c < bcp (multiples of 4): `ap` holds the block's rows
 * packed by rows (depth `depth`), `kp` every key packed by keys (key panel c at (s0 + c) · depth).
 */
export function blockScores(
  depth: number,
  ap: Float64Array,
  brp: number,
  kp: Float64Array,
  s0: number,
  bcp: number,
  out: Float64Array,
  ldo: number,
): void {
  for (let r = 0; r < brp; r += 4)
    for (let c = 0; c < bcp; c += 4) microKernel(depth, ap, r * depth, kp, (s0 + c) * depth, out, r * ldo + c, ldo);
}

/**
 * Marks keys [s0, s1) whose row in the key-packed panel `xp` (width lanes, panel ⌊d / 4⌋ holding all ns keys) holds a
 * NaN or ±∞: bad[j] = 1, else 0. Returns whether any does.
 */
export function markNonFiniteKeys(
  xp: Float64Array,
  ns: number,
  width: number,
  s0: number,
  s1: number,
  bad: Uint8Array,
): boolean {
  let any = false;
  for (let j = s0; j < s1; j++) {
    let z = 0;
    for (let d = 0, q = j << 2; d < width; d += 4, q += ns << 2)
      z += (xp[q]! + xp[q + 1]! + xp[q + 2]! + xp[q + 3]!) * 0;
    bad[j] = z === 0 ? 0 : 1;
    if (z !== 0) any = true;
  }
  return any;
}

/**
 * tb[r · roundUp(width) + d] = Σ_c a[r, c] · x[s0 + c, d] for the rows r < br of a block packed by rows (`ap`, bc
 * columns: the block's keys) and the key-packed panel `xp` (see markNonFiniteKeys). When `anyBad` and a key of the block
 * is marked in `bad`, the same sums in the same order over the c with a[r, c] ≠ 0 only (no 0 · NaN).
 */
export function blockTimesKeys(
  ap: Float64Array,
  br: number,
  bc: number,
  xp: Float64Array,
  ns: number,
  s0: number,
  width: number,
  tb: Float64Array,
  bad: Uint8Array,
  anyBad: boolean,
): void {
  const ldt = roundUp(width);
  let badBlock = false;
  if (anyBad) for (let c = 0; c < bc; c++) if (bad[s0 + c] !== 0) badBlock = true;
  if (!badBlock) {
    const brp = roundUp(br);
    for (let r = 0; r < brp; r += 4)
      for (let d = 0; d < ldt; d += 4) microKernel(bc, ap, r * bc, xp, d * ns + s0 * 4, tb, r * ldt + d, ldt);
    return;
  }
  for (let r = 0; r < br; r++) {
    const aRow = (r >> 2) * bc * 4 + (r & 3);
    const to = r * ldt;
    tb.fill(0, to, to + width);
    for (let c = 0; c < bc; c++) {
      const a = ap[aRow + c * 4]!;
      if (a === 0) continue;
      for (let d = 0, xo = (s0 + c) * 4; d < width; d++)
        tb[to + d] = tb[to + d]! + a * xp[xo + (d >> 2) * ns * 4 + (d & 3)]!;
    }
  }
}
