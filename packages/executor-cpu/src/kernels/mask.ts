// mask: hide scores by setting them to −∞ (causal with an alignment, sliding window, key padding; composed by "or").
// Softmax then gives hidden keys a weight of exactly 0.
import type { Tensor } from "@attngraph/tensor";
import {
  afterwards,
  findNonBinary,
  nonBinaryMaskError,
  overRows,
  userMaskStrides,
  type MaskAttrs,
  type MaskGeometry,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result, type Call, attrsOf } from "./adapter.js";
import { keyPaddingInput } from "./key-padding.js";
import type { RowRange, StridedView } from "./strided.js";
// Shared by every executor (@attngraph/graph kernel-checks), re-exported under the names this package always used.
import { maskOffset, windowOf } from "@attngraph/graph";
export { maskOffset, windowOf };

// The mask rule, shared with the fused attention kernel so both hide exactly the same keys. By position, query i sees
// keys lo < j <= hi; a padded key is hidden on top of that.

/** The last key query i sees by position (hi): i + off under causal, else the last key S − 1. */
export function lastVisibleKey(i: number, off: number, causal: boolean, ns: number): number {
  return causal ? i + off : ns - 1;
}

/** The last key the sliding window hides for query i (lo: keys j <= lo are hidden), or -1 without a window (win = 0). */
export function lastWindowedKey(i: number, off: number, win: number): number {
  return win > 0 ? i + off - win : -1;
}

/**
 * Copies scores, writing −∞ where a mask hides the key. With off = 0 ("top-left") or S − L ("bottom-right"), query i
 * sees key j when j <= i + off (causal) and, with a window w, also j > i + off − w; a key with keyPaddingMask[b, j] = 1
 * is hidden for every query. Padding values must already be checked to be 0 or 1 (`findInvalidPadding`).
 * @param scores [B, H, L, S], any strides
 * @param keyPaddingMask [B, S] of 0/1 (1 = padded key), any strides, or undefined
 * @param out where to write [B, H, L, S] row-major; default: a new array
 * @param rows the rows of [B · H · L] to write; default: all
 * @returns [B, H, L, S], row-major (`out` when given)
 */
export function maskImpl(
  scores: StridedView,
  keyPaddingMask: StridedView | undefined,
  attrs: MaskGeometry,
  out?: Float32Array,
  rows?: RowRange,
  user?: UserTerms,
): Float32Array {
  const [nb, nh, nl, ns] = scores.shape as readonly number[] as [number, number, number, number];
  const [ss0, ss1, ss2, ss3] = scores.strides as [number, number, number, number];
  const off = maskOffset(attrs.alignment, nl, ns);
  const causal = attrs.causal;
  const win = windowOf(attrs);
  const sd = scores.data;
  const pd = keyPaddingMask?.data;
  const ps0 = keyPaddingMask?.strides[0] ?? 0;
  const ps1 = keyPaddingMask?.strides[1] ?? 0;
  const y = out ?? new Float32Array(nb * nh * nl * ns);
  const r0 = rows?.start ?? 0;
  const r1 = rows?.end ?? nb * nh * nl;
  let o = r0 * ns;
  for (let r = r0; r < r1; r++) {
    const i = r % nl;
    const bh = (r - i) / nl;
    const h = bh % nh;
    const b = (bh - h) / nh;
    const pBase = (keyPaddingMask?.offset ?? 0) + b * ps0;
    // Visible by position: first <= j < end; everything else in the row is −∞.
    // Clamped to S: with a window and L > S, a late query's window starts past the last key (it sees nothing), and an
    // unclamped `first` would write past the row into the next one.
    const first = Math.min(ns, Math.max(0, lastWindowedKey(i, off, win) + 1));
    const end = Math.max(first, Math.min(ns, lastVisibleKey(i, off, causal, ns) + 1));
    const sRow = scores.offset + b * ss0 + h * ss1 + i * ss2;
    let j = 0;
    for (; j < first; j++) y[o++] = -Infinity;
    if (pd === undefined) for (let p = sRow + j * ss3; j < end; j++, p += ss3) y[o++] = sd[p]!;
    else for (let p = sRow + j * ss3; j < end; j++, p += ss3) y[o++] = pd[pBase + j * ps1] === 1 ? -Infinity : sd[p]!;
    for (; j < ns; j++) y[o++] = -Infinity;
    if (user) applyUserTerms(y, o - ns, ns, b, h, i, user);
  }
  return y;
}

/**
 * The mask op's other inputs, as strided views over [B, H, L, S] (strides 0 on broadcast axes, see userMaskStrides):
 * a 0/1 user mask (0 hides), an additive bias, and the scale applied to visible scores before the bias.
 */
export interface UserTerms {
  readonly mask?: {
    readonly data: Float32Array;
    readonly offset: number;
    readonly strides: readonly [number, number, number, number];
  };
  readonly bias?: {
    readonly data: Float32Array;
    readonly offset: number;
    readonly strides: readonly [number, number, number, number];
  };
  readonly scale: number;
}

/**
 * Applies the user terms to one output row (already masked by position and padding) at `o`: a user mask value of 0
 * hides the key; a visible entry becomes scale · score + bias (an entry that is already −∞ stays −∞ whatever the bias).
 * Mask values must already be checked to be 0 or 1.
 */
function applyUserTerms(y: Float32Array, o: number, ns: number, b: number, h: number, i: number, u: UserTerms): void {
  const m = u.mask;
  const bi = u.bias;
  const mBase = m ? m.offset + b * m.strides[0] + h * m.strides[1] + i * m.strides[2] : 0;
  const bBase = bi ? bi.offset + b * bi.strides[0] + h * bi.strides[1] + i * bi.strides[2] : 0;
  for (let j = 0; j < ns; j++) {
    const v = y[o + j]!;
    if (v === -Infinity) continue;
    if (m && m.data[mBase + j * m.strides[3]] === 0) y[o + j] = -Infinity;
    else y[o + j] = u.scale * v + (bi ? bi.data[bBase + j * bi.strides[3]]! : 0);
  }
}

/**
 * The user mask and bias of a mask call (slots 2 and 3) with the scale, mask values checked to be exactly 0 or 1 (their
 * shapes are the op's shape rule's; userMaskStrides lays them over the scores). Undefined when the call has neither and
 * the scale is 1 (the plain positional mask).
 */
export function userTermsOf(call: Call, scores: Tensor, scale: number): UserTerms | undefined {
  const mask = optionalInput(call, 2, "mask");
  const bias = optionalInput(call, 3, "bias");
  if (mask === undefined && bias === undefined && scale === 1) return undefined;
  const view = (t: Tensor, field: string) => ({
    data: t.data,
    offset: t.offset,
    strides: userMaskStrides(call, field, scores.shape, t),
  });
  if (mask !== undefined) {
    const m = view(mask, "mask");
    const bad = findNonBinary(mask.toFloat32Array(), mask.shape);
    if (bad !== undefined) throw nonBinaryMaskError(call, "mask", bad);
    return bias === undefined ? { mask: m, scale } : { mask: m, bias: view(bias, "bias"), scale };
  }
  return bias === undefined ? { scale } : { bias: view(bias, "bias"), scale };
}

/**
 * Inputs: scores [B, H, L, S], optional keyPaddingMask [B, S], mask and bias ([L, S], [B, L, S] or [B, H, L, S]) →
 * [B, H, L, S]; attrs { causal, window, alignment, scale }.
 */
export const maskKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const scores = requireInput(call, 0, "scores");
  const pad = keyPaddingInput(call, 1);
  const attrs = attrsOf<MaskAttrs>(call);
  const user = userTermsOf(call, scores, attrs.scale);
  const [nb, nh, nl, ns] = scores.shape as [number, number, number, number];
  const y = outData(call, scores.shape) ?? new Float32Array(nb * nh * nl * ns);
  // In place (out = scores' memory) each row is read before it is written, chunk or not.
  const pending = overRows(call, chunkWork, nb * nh * nl, ns * MASK_WORK, (start, end) =>
    maskImpl(scores, pad, attrs, y, { start, end }, user),
  );
  return afterwards(pending, () => result(call, y, scores.shape));
});

/** Work per element in multiply-adds of the matmul core: a strided copy with a compare (measured ≈ 5 on Node 20). */
const MASK_WORK = 5;
