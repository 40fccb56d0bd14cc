// attention: score → mask → softmax → dropout → weighted-sum in one pass, FlashAttention style. Keys are visited in
// blocks with a running max and sum per query row, so the [L, S] weights never exist; key blocks that causal or window
// masking hides from a whole query block are never computed. Both products run on the matmul core's packed panels and
// register tile. The mask rule and the dropout bits are the unfused kernels' own functions, so the fused kernel hides
// and drops exactly the same elements as the chain. A key whose weight is exactly 0 (masked, dropped) contributes
// nothing, not even a NaN or ±∞ of its value row (FlashAttention semantics; PyTorch's math path gives 0 · NaN = NaN):
// a key block holding such a value row takes a per-element product that skips zero weights.
import type { AttentionAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { expectDim, expectHeadGroups, expectRank, optionalInput, outData, requireInput, result } from "./adapter.js";
import { checkDropoutAttrs, dropoutThreshold, fmix32, mixedBits } from "./dropout.js";
import { checkKeyPadding, checkMaskAttrs, lastVisibleKey, lastWindowedKey, maskOffset, windowOf } from "./mask.js";
import { ensure64, microKernel, packPanels, roundUp } from "./matmul.js";
import { checkScale } from "./softmax.js";
import type { StridedView } from "./strided.js";

/** Query rows and keys per block: a 64×64 float64 score block (32 KiB) and its panels stay in L1/L2. */
const BQ = 64;
const BK = 64;

// Scratch, reused across calls (kernels are synchronous). Separate from the matmul core's own panels.
let kPack: Float64Array = new Float64Array(0); // K of one kv head as Kᵀ panels: 4 keys per panel, D deep
let vPack: Float64Array = new Float64Array(0); // V of one kv head: 4 value dims per panel, S deep
let qPack: Float64Array = new Float64Array(0); // one query block: 4 rows per panel, D deep
let pPack: Float64Array = new Float64Array(0); // one block of unnormalised weights: 4 rows per panel, BK deep
let sBlock: Float64Array = new Float64Array(0); // raw scores of one block, [BQ, BK]
let tBlock: Float64Array = new Float64Array(0); // P · V of one block, [BQ, Dv rounded up]
let acc: Float64Array = new Float64Array(0); // the output rows being accumulated, [BQ, Dv]
const rowMax = new Float64Array(BQ);
const rowSum = new Float64Array(BQ);
const rowAlpha = new Float64Array(BQ); // exp(old max − new max): how much the block rescales what came before
let hidden = new Uint8Array(0); // 1 = padded key, for the current batch
let badValue = new Uint8Array(0); // 1 = the value row holds a NaN or ±∞, for the current kv head

/**
 * context = dropout(softmax(scale · mask(Q · Kᵀ))) · V per batch and head, streaming over key blocks. The numbers equal
 * the unfused chain up to float rounding (scores stay float64 here; the chain stores them as float32).
 * - Masks: causal with `alignment`, sliding `window`, key padding; the rule is the mask kernel's.
 * - A query row with every key hidden gives zeros, never NaN. A NaN score makes its row NaN, as in softmax.
 * - A key a query cannot attend to (weight exactly 0: masked, dropped) adds nothing to its row, whatever its value row
 *   holds: a NaN or ±∞ value reaches only the queries that weigh that key.
 * - Dropout (training, rate > 0) drops weight [b, h, i, j] exactly when the dropout kernel drops element
 *   ((b · H + h) · L + i) · S + j of the weights tensor, and scales kept weights by 1 / (1 − rate).
 * Shapes and padding values are not checked here (the adapter does).
 * @param q [B, H, L, D], any strides
 * @param k [B, Hkv, S, D], any strides; Hkv divides H (query head h reads kv head ⌊h / (H / Hkv)⌋)
 * @param v [B, Hkv, S, Dv], any strides
 * @param keyPaddingMask [B, S] of 0/1 (1 = padded key), any strides, or undefined
 * @param out where to write [B, H, L, Dv] row-major; default: a new array
 * @returns [B, H, L, Dv], row-major (`out` when given)
 */
export function attentionImpl(
  q: StridedView,
  k: StridedView,
  v: StridedView,
  keyPaddingMask: StridedView | undefined,
  attrs: AttentionAttrs,
  out?: Float32Array,
): Float32Array {
  const [nb, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const ndv = v.shape[3]!;
  const y = out ?? new Float32Array(nb * nh * nl * ndv);
  if (nb * nh * nl * ndv === 0) return y;
  const [qs0, qs1, qs2, qs3] = q.strides as [number, number, number, number];
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
  const group = nh / nhkv; // query heads per kv head
  const off = maskOffset(attrs.alignment, nl, ns);
  const causal = attrs.causal;
  const win = windowOf(attrs);
  const scale = attrs.scale;
  const dropping = attrs.training && attrs.dropoutRate > 0;
  const mixedSeed = fmix32(attrs.dropoutSeed);
  const threshold = dropoutThreshold(attrs.dropoutRate);
  const keptScale = dropping ? Math.fround(1 / (1 - attrs.dropoutRate)) : 1;
  const dvp = roundUp(ndv);

  const kp = (kPack = ensure64(kPack, roundUp(ns) * nd));
  const vp = (vPack = ensure64(vPack, dvp * ns));
  const qp = (qPack = ensure64(qPack, BQ * nd));
  const pp = (pPack = ensure64(pPack, BQ * BK));
  const sb = (sBlock = ensure64(sBlock, BQ * BK));
  const tb = (tBlock = ensure64(tBlock, BQ * dvp));
  const o = (acc = ensure64(acc, BQ * ndv));
  if (hidden.length < ns) hidden = new Uint8Array(ns);
  const pad = hidden;
  if (badValue.length < ns) badValue = new Uint8Array(ns);
  const bad = badValue;

  for (let b = 0; b < nb; b++) {
    // Padding is per batch: flatten it to one byte per key so the inner loop does a single load.
    if (keyPaddingMask === undefined) pad.fill(0, 0, ns);
    else {
      const pd = keyPaddingMask.data;
      const ps1 = keyPaddingMask.strides[1]!;
      for (let j = 0, p = keyPaddingMask.offset + b * keyPaddingMask.strides[0]!; j < ns; j++, p += ps1) pad[j] = pd[p] === 1 ? 1 : 0;
    }
    for (let g = 0; g < nhkv; g++) {
      // Packed once per kv head, shared by its `group` query heads (GQA by index, never repeated).
      packPanels(k.data, k.offset + b * ks0 + g * ks1, ks2, ks3, ns, nd, kp, 0); // Kᵀ: lanes = keys, depth = D
      packPanels(v.data, v.offset + b * vs0 + g * vs1, vs3, vs2, ndv, ns, vp, 0); // V: lanes = value dims, depth = S
      // Value rows with a NaN or ±∞ (x · 0 is NaN exactly for those; float64 sums of 4 floats cannot overflow): their
      // key blocks skip zero weights one by one.
      let anyBad = false;
      for (let j = 0; j < ns; j++) {
        let z = 0;
        for (let d = 0, p = (j << 2); d < ndv; d += 4, p += ns << 2) z += (vp[p]! + vp[p + 1]! + vp[p + 2]! + vp[p + 3]!) * 0;
        bad[j] = z === 0 ? 0 : 1;
        if (z !== 0) anyBad = true;
      }
      for (let h = g * group; h < (g + 1) * group; h++) {
        const qBase = q.offset + b * qs0 + h * qs1;
        const headRow = (b * nh + h) * nl; // row index of [b, h, 0] in [B, H, L, ·]
        for (let i0 = 0; i0 < nl; i0 += BQ) {
          const br = Math.min(BQ, nl - i0);
          const brp = roundUp(br);
          // Keys any row of this block may see by position: [first, end). Blocks outside are fully masked: skipped.
          const first = Math.max(0, lastWindowedKey(i0, off, win) + 1);
          const end = Math.min(ns, lastVisibleKey(i0 + br - 1, off, causal, ns) + 1);
          rowMax.fill(-Infinity, 0, br);
          rowSum.fill(0, 0, br);
          o.fill(0, 0, br * ndv);
          if (end > first) packPanels(q.data, qBase + i0 * qs2, qs2, qs3, br, nd, qp, 0);
          // Panels start at multiples of 4 keys, so the first block starts at `first` rounded down.
          for (let s0 = first & ~3; s0 < end; s0 += BK) {
            const bc = Math.min(BK, end - s0);
            const bcp = roundUp(bc);
            // Raw scores of the block: sb[r · BK + c] = q[i0 + r] · k[s0 + c].
            for (let r = 0; r < brp; r += 4) for (let c = 0; c < bcp; c += 4) microKernel(nd, qp, r * nd, kp, (s0 + c) * nd, sb, r * BK + c, BK);
            for (let r = 0; r < br; r++) {
              const i = i0 + r;
              // This row's visible columns of the block by position: [c0, c1).
              const c0 = Math.max(0, lastWindowedKey(i, off, win) + 1 - s0);
              const c1 = Math.min(bc, lastVisibleKey(i, off, causal, ns) + 1 - s0);
              const sRow = r * BK;
              // Hidden: outside [c0, c1), padded, or a raw score of −∞ (softmax's own "masked" marker).
              let mx = -Infinity;
              let nan = false;
              for (let c = c0; c < c1; c++) {
                const sv = sb[sRow + c]!;
                if (pad[s0 + c] !== 0 || sv === -Infinity) continue;
                const x = scale * sv;
                // `>` skips NaN; it is remembered, reaches exp below and makes the row NaN, as softmax does.
                if (x > mx) mx = x;
                else if (x !== x) nan = true;
              }
              // The weights go to pp in the A-panel layout of P · V: row r, key c at ((r >> 2) · bc + c) · 4 + (r & 3).
              const pRow = (r >> 2) * bc * 4 + (r & 3);
              if (mx === -Infinity && !nan) {
                // Nothing visible in this block for this row: weights 0, running max and sum unchanged.
                for (let c = 0; c < bc; c++) pp[pRow + c * 4] = 0;
                rowAlpha[r] = 1;
                continue;
              }
              const mOld = rowMax[r]!;
              const mNew = mOld > mx ? mOld : mx;
              const alpha = Math.exp(mOld - mNew); // 0 on the row's first visible block (mOld = −∞)
              let sum = 0;
              const dropBase = (headRow + i) * ns + s0; // index of weight [b, h, i, s0] in [B, H, L, S]
              for (let c = 0; c < bc; c++) {
                let p = 0;
                const sv = sb[sRow + c]!;
                if (c >= c0 && c < c1 && pad[s0 + c] === 0 && sv !== -Infinity) {
                  p = Math.exp(scale * sv - mNew);
                  sum += p;
                  if (dropping && mixedBits(mixedSeed, dropBase + c) < threshold) p = 0;
                }
                pp[pRow + c * 4] = p;
              }
              rowMax[r] = mNew;
              rowSum[r] = rowSum[r]! * alpha + sum;
              rowAlpha[r] = alpha;
            }
            // Padding rows of the last panel (br..brp) hold stale weights; their results are never read.
            // tb[r · dvp + d] = Σ_c pp[r, c] · v[s0 + c, d]
            let badBlock = false;
            if (anyBad) for (let c = 0; c < bc; c++) if (bad[s0 + c] !== 0) badBlock = true;
            if (!badBlock) {
              for (let r = 0; r < brp; r += 4) for (let d = 0; d < dvp; d += 4) microKernel(bc, pp, r * bc, vp, d * ns + s0 * 4, tb, r * dvp + d, dvp);
            } else {
              // The same sums, in the same order, over the keys with a weight ≠ 0 only (no 0 · NaN).
              for (let r = 0; r < br; r++) {
                const pRow = (r >> 2) * bc * 4 + (r & 3);
                const to = r * dvp;
                tb.fill(0, to, to + ndv);
                for (let c = 0; c < bc; c++) {
                  const p = pp[pRow + c * 4]!;
                  if (p === 0) continue;
                  for (let d = 0, vo = (s0 + c) * 4; d < ndv; d++) tb[to + d] = tb[to + d]! + p * vp[vo + (d >> 2) * ns * 4 + (d & 3)]!;
                }
              }
            }
            for (let r = 0; r < br; r++) {
              const alpha = rowAlpha[r]!;
              for (let d = 0, ao = r * ndv, to = r * dvp; d < ndv; d++) o[ao + d] = o[ao + d]! * alpha + tb[to + d]!;
            }
          }
          // Normalise (and undo dropout's expected shrink); a row that saw no key has sum 0 and gives zeros.
          for (let r = 0; r < br; r++) {
            const sum = rowSum[r]!;
            const inv = sum === 0 ? 0 : keptScale / sum;
            for (let d = 0, ao = r * ndv, yo = (headRow + i0 + r) * ndv; d < ndv; d++) y[yo + d] = o[ao + d]! * inv;
          }
        }
      }
    }
  }
  return y;
}

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], optional keyPaddingMask [B, S] → [B, H, L, Dv];
 * attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training }, checked as mask, softmax and dropout
 * check theirs. Absent dropout attributes mean no dropout (the op's defaults).
 */
export const attentionKernel: CpuKernel = (call) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const v = requireInput(call, 2, "v");
  const pad = optionalInput(call, 3, "keyPaddingMask");
  const attrs = checkAttrs(call);
  expectRank(call, "q", q, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  expectRank(call, "v", v, 4, "[B, Hkv, S, Dv]");
  const [nb, nh, nl] = q.shape as [number, number, number, number];
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, k.shape[1]!, k);
  expectDim(call, "k", "head dim D of keys must match the queries", q.shape[3]!, k.shape[3]!, k);
  expectDim(call, "v", "batch B of values must match the queries", nb, v.shape[0]!, v);
  expectDim(call, "v", "values must have as many heads Hkv as keys", k.shape[1]!, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", k.shape[2]!, v.shape[2]!, v);
  if (pad !== undefined) checkKeyPadding(call, pad, nb, k.shape[2]!, "queries");
  const shape = [nb, nh, nl, v.shape[3]!];
  return result(call, attentionImpl(q, k, v, pad, attrs, outData(call, shape)), shape);
};

function checkAttrs(call: Parameters<CpuKernel>[0]): AttentionAttrs {
  const mask = checkMaskAttrs(call);
  const scale = checkScale(call);
  const dropout = checkDropoutAttrs(call, ATTENTION_DROPOUT_FIELDS, NO_DROPOUT);
  return { ...mask, scale, dropoutRate: dropout.rate, dropoutSeed: dropout.seed, training: dropout.training };
}

const ATTENTION_DROPOUT_FIELDS = { rate: "dropoutRate", seed: "dropoutSeed", training: "training" } as const;
const NO_DROPOUT = { rate: 0, seed: 0, training: false } as const;
