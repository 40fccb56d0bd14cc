// mask: hide scores by setting them to −∞ (causal with an alignment, sliding window, key padding; composed by "or").
// Softmax then gives hidden keys a weight of exactly 0.
import { AttnGraphError, Tensor, describe } from "@attngraph/tensor";
import type { MaskAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { attrError, expectDim, expectRank, optionalInput, requireInput } from "./adapter.js";
import type { StridedView } from "./strided.js";

/**
 * Copies scores, writing −∞ where a mask hides the key. With off = 0 ("top-left") or S − L ("bottom-right"), query i
 * sees key j when j <= i + off (causal) and, with a window w, also j > i + off − w; a key with keyPaddingMask[b, j] = 1
 * is hidden for every query. Padding values must already be checked to be 0 or 1 (`findInvalidPadding`).
 * @param scores [B, H, L, S], any strides
 * @param keyPaddingMask [B, S] of 0/1 (1 = padded key), any strides, or undefined
 * @returns [B, H, L, S], row-major
 */
export function maskImpl(scores: StridedView, keyPaddingMask: StridedView | undefined, attrs: MaskAttrs): Float32Array {
  const [nb, nh, nl, ns] = scores.shape as readonly number[] as [number, number, number, number];
  const [ss0, ss1, ss2, ss3] = scores.strides as [number, number, number, number];
  const off = attrs.alignment === "bottom-right" ? ns - nl : 0;
  const causal = attrs.causal;
  const win = causal && attrs.window !== null ? attrs.window : 0; // 0 = no window
  const sd = scores.data;
  const pd = keyPaddingMask?.data;
  const ps0 = keyPaddingMask?.strides[0] ?? 0;
  const ps1 = keyPaddingMask?.strides[1] ?? 0;
  const out = new Float32Array(nb * nh * nl * ns);
  let o = 0;
  for (let b = 0; b < nb; b++) {
    const pBase = (keyPaddingMask?.offset ?? 0) + b * ps0;
    for (let h = 0; h < nh; h++) {
      for (let i = 0; i < nl; i++) {
        // Visible keys by position: lo < j <= hi.
        const hi = causal ? i + off : ns - 1;
        const lo = win > 0 ? i + off - win : -1;
        const sRow = scores.offset + b * ss0 + h * ss1 + i * ss2;
        for (let j = 0; j < ns; j++) {
          const hidden = j > hi || j <= lo || (pd !== undefined && pd[pBase + j * ps1] === 1);
          out[o++] = hidden ? -Infinity : sd[sRow + j * ss3]!;
        }
      }
    }
  }
  return out;
}

/** The row-major index of the first padding value that is not exactly 0 or 1 (NaN included), or -1 when all are. */
export function findInvalidPadding(keyPaddingMask: StridedView): number {
  const [nb, ns] = keyPaddingMask.shape as readonly number[] as [number, number];
  const [ps0, ps1] = keyPaddingMask.strides as [number, number];
  const pd = keyPaddingMask.data;
  for (let b = 0; b < nb; b++) {
    for (let j = 0, p = keyPaddingMask.offset + b * ps0; j < ns; j++, p += ps1) {
      const v = pd[p]!;
      if (v !== 0 && v !== 1) return b * ns + j;
    }
  }
  return -1;
}

/** Inputs: scores [B, H, L, S], optional keyPaddingMask [B, S] → [B, H, L, S]; attrs { causal, window, alignment }. */
export const maskKernel: CpuKernel = (call) => {
  const scores = requireInput(call, 0, "scores");
  const pad = optionalInput(call, 1, "keyPaddingMask");
  const attrs = checkAttrs(call);
  expectRank(call, "scores", scores, 4, "[B, H, L, S]");
  if (pad !== undefined) {
    expectRank(call, "keyPaddingMask", pad, 2, "[B, S]");
    expectDim(call, "keyPaddingMask", "batch B of the padding mask must match the scores", scores.shape[0]!, pad.shape[0]!, pad);
    expectDim(call, "keyPaddingMask", "padding mask length must equal the key length S", scores.shape[3]!, pad.shape[1]!, pad);
    // Checked in full before anything is written: a 2 or a NaN is a caller's bug, never silently "not padded".
    const bad = findInvalidPadding(pad);
    if (bad >= 0) {
      const ns = pad.shape[1]!;
      const subject = `${call.node}.keyPaddingMask`;
      const got = `${pad.toFloat32Array()[bad]} at [${Math.floor(bad / ns)}, ${bad % ns}]`;
      throw new AttnGraphError("input", describe(subject, "key padding values must be 1 (padded key) or 0 (real key)", "0 or 1", got), {
        subject,
        expected: "0 or 1",
        got,
      });
    }
  }
  return new Tensor(maskImpl(scores, pad, attrs), scores.shape);
};

function checkAttrs(call: Parameters<CpuKernel>[0]): MaskAttrs {
  const { causal, alignment } = call.attrs as Partial<MaskAttrs>;
  const window = (call.attrs as Partial<MaskAttrs>).window ?? null; // absent = no window, as normalizeAttrs does
  if (typeof causal !== "boolean") throw attrError(call, "causal", "true or false", causal);
  if (window !== null && (!Number.isInteger(window) || window! < 1)) throw attrError(call, "window", "null or an integer >= 1", window);
  if (window !== null && !causal) throw attrError(call, "window", "a sliding window only with causal: true", window);
  if (alignment !== "top-left" && alignment !== "bottom-right") throw attrError(call, "alignment", '"top-left" or "bottom-right"', alignment);
  return { causal, window, alignment };
}
