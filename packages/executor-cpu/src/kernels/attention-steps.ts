// The fused attention's streaming loops as a sequence of steps (see attention.ts for the math), so that one call can
// run them back to back (attentionImpl) or pause between them (a chunked kernel with a signal, chunks.ts). A step is
// the packing of a range of keys, or a range of whole key blocks of one query block: the blocks, and therefore every
// sum, are those of an uninterrupted call, so the result does not depend on where the pauses fall. The generator only
// orders the steps; the loops live in plain functions (V8 optimises them as any other function).
import type { AttentionAttrs, CompiledMods } from "@attngraph/graph";
import { blockClass, modifyBlock } from "./attention-mods.js";
import { BLOCK_ALL, BLOCK_NONE } from "@attngraph/graph";
import { dropoutThreshold, fmix32, mixedBits } from "./dropout.js";
import { lastVisibleKey, lastWindowedKey, maskOffset, windowOf } from "./mask.js";
import { blockScores, blockTimesKeys, markNonFiniteKeys } from "./key-block-products.js";
import { ensure64, packPanels, roundUp } from "./matmul.js";
import type { QueryBlock } from "./query-block.js";
import type { StridedView } from "./strided.js";

/** Query rows and keys per block: a 64×64 float64 score block (32 KiB) and its panels stay in L1/L2. */
const BQ = 64;
const BK = 64;
/**
 * Work of one weight (mask test, exp, dropout test) in multiply-adds of the register tile: V8's Math.exp alone costs
 * about 35 of them (Node 20, measured against the matmul core).
 */
const EXP_WORK = 36;

/**
 * Scratch of one attention call. A call that runs its steps back to back borrows the module's instance (nothing else
 * can run in between); a call that pauses between steps owns one, since another kernel may run during a pause.
 */
export class AttentionScratch {
  kPack: Float64Array = new Float64Array(0); // K of one kv head as Kᵀ panels: 4 keys per panel, D deep
  vPack: Float64Array = new Float64Array(0); // V of one kv head: 4 value dims per panel, S deep
  qPack: Float64Array = new Float64Array(0); // one query block: 4 rows per panel, D deep
  pPack: Float64Array = new Float64Array(0); // one block of unnormalised weights: 4 rows per panel, BK deep
  sBlock: Float64Array = new Float64Array(0); // raw scores of one block, [BQ, BK]
  tBlock: Float64Array = new Float64Array(0); // P · V of one block, [BQ, Dv rounded up]
  acc: Float64Array = new Float64Array(0); // the output rows being accumulated, [BQ, Dv]
  readonly rowMax = new Float64Array(BQ);
  readonly rowSum = new Float64Array(BQ);
  readonly rowAlpha = new Float64Array(BQ); // exp(old max − new max): how much the block rescales what came before
  hidden: Uint8Array = new Uint8Array(0); // 1 = padded key, for the current batch
  badValue: Uint8Array = new Uint8Array(0); // 1 = the value row holds a NaN or ±∞, for the current kv head
  anyBad = false; // some key of the current kv head has a bad value row

  /** Grows the buffers for key length S, head dim D and value dim Dv. */
  fit(ns: number, nd: number, ndv: number): this {
    const dvp = roundUp(ndv);
    this.kPack = ensure64(this.kPack, roundUp(ns) * nd);
    this.vPack = ensure64(this.vPack, dvp * ns);
    this.qPack = ensure64(this.qPack, BQ * nd);
    this.pPack = ensure64(this.pPack, BQ * BK);
    this.sBlock = ensure64(this.sBlock, BQ * BK);
    this.tBlock = ensure64(this.tBlock, BQ * dvp);
    this.acc = ensure64(this.acc, BQ * ndv);
    if (this.hidden.length < ns) this.hidden = new Uint8Array(ns);
    if (this.badValue.length < ns) this.badValue = new Uint8Array(ns);
    return this;
  }
}

/** The scratch of calls that run their steps back to back. */
export const sharedScratch = new AttentionScratch();

/** What every step reads: inputs, output, dims and the attributes in the form the loops use. */
interface Problem {
  readonly q: StridedView;
  readonly k: StridedView;
  readonly v: StridedView;
  readonly pad: StridedView | undefined;
  readonly y: Float32Array;
  readonly nh: number;
  readonly nl: number;
  readonly ns: number;
  readonly nd: number;
  readonly ndv: number;
  readonly dvp: number;
  readonly off: number;
  readonly causal: boolean;
  readonly win: number;
  /** The softmax's scale of a block's scores: 1 with modifications (the block holds s' already). */
  readonly scale: number;
  readonly mods: CompiledMods | undefined;
  /** The score scale the modifications apply first. */
  readonly modScale: number;
  readonly dropping: boolean;
  readonly mixedSeed: number;
  readonly threshold: number;
  readonly keptScale: number;
}

/** Upper bound of the work of a whole call (every key block visited), in the units steps yield. */
export function attentionWork(q: StridedView, k: StridedView, v: StridedView): number {
  const [nb, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  const ns = k.shape[2]!;
  return nb * nh * nl * ns * (nd + v.shape[3]! + EXP_WORK);
}

/** How many keys one query block visits in `chunkWork` units: the `keysPerStep` of a chunked call. */
export function keysPerChunk(q: StridedView, v: StridedView, chunkWork: number): number {
  const rows = Math.max(1, Math.min(BQ, q.shape[2]!));
  return Math.max(1, Math.floor(chunkWork / (rows * (q.shape[3]! + v.shape[3]! + EXP_WORK))));
}

/**
 * attentionImpl's work as steps writing into `y` ([B, H, L, Dv] row-major); each yields the work it did (multiply-adds,
 * an exp counted as EXP_WORK). `keysPerStep` bounds the keys one step packs or visits, rounded to whole panels and key
 * blocks; Infinity gives one step per kv head's packing and one per query block.
 */
export function* attentionSteps(
  q: StridedView,
  k: StridedView,
  v: StridedView,
  pad: StridedView | undefined,
  attrs: AttentionAttrs,
  y: Float32Array,
  scratch: AttentionScratch,
  keysPerStep: number,
  mods?: CompiledMods,
): Generator<number, void, void> {
  const [nb, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const ndv = v.shape[3]!;
  if (nb * nh * nl * ndv === 0) return;
  const dropping = attrs.training && attrs.dropoutRate > 0;
  const p: Problem = {
    q,
    k,
    v,
    pad,
    y,
    nh,
    nl,
    ns,
    nd,
    ndv,
    dvp: roundUp(ndv),
    off: maskOffset(attrs.alignment, nl, ns),
    causal: attrs.causal,
    win: windowOf(attrs),
    scale: mods ? 1 : attrs.scale,
    mods,
    modScale: attrs.scale,
    dropping,
    mixedSeed: fmix32(attrs.dropoutSeed),
    threshold: dropoutThreshold(attrs.dropoutRate),
    keptScale: dropping ? Math.fround(1 / (1 - attrs.dropoutRate)) : 1,
  };
  scratch.fit(ns, nd, ndv);
  const group = nh / nhkv; // query heads per kv head
  // Packing ranges start on whole panels (4 keys); visiting ranges on whole key blocks.
  const packStep = keysPerStep === Infinity ? Math.max(ns, 1) : Math.max(4, Math.floor(keysPerStep / 4) * 4);
  const blockStep = keysPerStep === Infinity ? Infinity : Math.max(1, Math.floor(keysPerStep / BK)) * BK;
  for (let b = 0; b < nb; b++) {
    for (let g = 0; g < nhkv; g++) {
      // Packed once per kv head, shared by its `group` query heads (GQA by index, never repeated).
      scratch.anyBad = false;
      for (let s0 = 0; s0 < ns; s0 += packStep) {
        const s1 = Math.min(ns, s0 + packStep);
        packKeys(p, scratch, b, g, s0, s1);
        yield (s1 - s0) * (nd + ndv);
      }
      for (let h = g * group; h < (g + 1) * group; h++) {
        for (let i0 = 0; i0 < nl; i0 += BQ) {
          const br = Math.min(BQ, nl - i0);
          // Keys any row of this block may see by position: [first, end). Blocks outside are fully masked: skipped.
          const first = Math.max(0, lastWindowedKey(i0, p.off, p.win) + 1);
          const end = Math.min(ns, lastVisibleKey(i0 + br - 1, p.off, p.causal, ns) + 1);
          const qb: QueryBlock = { b, h, i0, br };
          startBlock(p, scratch, qb, end > first);
          // Panels start at multiples of 4 keys, so the first block starts at `first` rounded down.
          for (let s = first & ~3; s < end; s += blockStep)
            yield keyBlocks(p, scratch, qb, end, s, Math.min(end, s + blockStep));
          finishBlock(p, scratch, qb);
        }
      }
    }
  }
}

/**
 * Packs keys [s0, s1) of kv head g of batch b (s0 a multiple of 4): Kᵀ and V panels, the padding flags of batch b,
 * and which value rows hold a NaN or ±∞ (x · 0 is NaN exactly for those; float64 sums of 4 floats cannot overflow):
 * their key blocks skip zero weights one by one.
 */
function packKeys(p: Problem, s: AttentionScratch, b: number, g: number, s0: number, s1: number): void {
  const { k, v, pad, ns, nd, ndv } = p;
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
  const vp = s.vPack;
  packPanels(k.data, k.offset + b * ks0 + g * ks1 + s0 * ks2, ks2, ks3, s1 - s0, nd, s.kPack, s0 * nd); // Kᵀ: lanes = keys, depth = D
  // V: lanes = value dims, depth = S; panel ⌊d / 4⌋ holds S keys, so a range of keys is a range within each panel.
  const vBase = v.offset + b * vs0 + g * vs1 + s0 * vs2;
  for (let d0 = 0; d0 < ndv; d0 += 4)
    packPanels(v.data, vBase + d0 * vs3, vs3, vs2, Math.min(4, ndv - d0), s1 - s0, vp, d0 * ns + s0 * 4);
  const hidden = s.hidden;
  if (pad === undefined) hidden.fill(0, s0, s1);
  else {
    // Padding is per batch: flattened to one byte per key so the inner loop does a single load.
    const pd = pad.data;
    const ps1 = pad.strides[1]!;
    for (let j = s0, q = pad.offset + b * pad.strides[0]! + s0 * ps1; j < s1; j++, q += ps1)
      hidden[j] = pd[q] === 1 ? 1 : 0;
  }
  if (markNonFiniteKeys(vp, ns, ndv, s0, s1, s.badValue)) s.anyBad = true;
}

/** Starts query block `qb`: running max −∞, sums and output rows 0, the block's queries packed. */
function startBlock(p: Problem, s: AttentionScratch, qb: QueryBlock, anyKeys: boolean): void {
  const { q, nd, ndv } = p;
  const { b, h, i0, br } = qb;
  s.rowMax.fill(-Infinity, 0, br);
  s.rowSum.fill(0, 0, br);
  s.acc.fill(0, 0, br * ndv);
  if (!anyKeys) return;
  const [qs0, qs1, qs2, qs3] = q.strides as [number, number, number, number];
  packPanels(q.data, q.offset + b * qs0 + h * qs1 + i0 * qs2, qs2, qs3, br, nd, s.qPack, 0);
}

/**
 * Streams the key blocks starting in [sFrom, sTo) (whole blocks of BK counted from the block's first visible key & ~3)
 * into the running max, sum and output rows of the current query block; `end` is the block's last visible key + 1.
 * Returns the work done.
 */
function keyBlocks(p: Problem, s: AttentionScratch, qb: QueryBlock, end: number, sFrom: number, sTo: number): number {
  const { ns, nd, ndv, dvp, off, causal, win, scale, dropping, mixedSeed, threshold } = p;
  const { b, h, i0, br } = qb;
  const headRow = (b * p.nh + h) * p.nl; // row index of [b, h, 0] in [B, H, L, ·]
  const {
    kPack: kp,
    vPack: vp,
    qPack: qp,
    pPack: pp,
    sBlock: sb,
    tBlock: tb,
    acc: o,
    rowMax,
    rowSum,
    rowAlpha,
    hidden: pad,
    badValue: bad,
    anyBad,
  } = s;
  const brp = roundUp(br);
  let work = 0;
  for (let s0 = sFrom; s0 < sTo; s0 += BK) {
    const bc = Math.min(BK, end - s0);
    const bcp = roundUp(bc);
    // A block the mask modification hides from every row of this query block adds nothing: skipped (block sparsity).
    const cls = blockClass(p.mods, qb, s0, bc);
    if (cls === BLOCK_NONE) continue;
    work += br * bc * (nd + ndv + EXP_WORK);
    // Raw scores of the block: sb[r · BK + c] = q[i0 + r] · k[s0 + c].
    blockScores(nd, qp, brp, kp, s0, bcp, sb, BK);
    if (p.mods) modifyBlock(p.mods, p.modScale, sb, BK, qb, s0, bc, cls === BLOCK_ALL);
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
        else if (Number.isNaN(x)) nan = true;
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
        let w = 0;
        const sv = sb[sRow + c]!;
        if (c >= c0 && c < c1 && pad[s0 + c] === 0 && sv !== -Infinity) {
          w = Math.exp(scale * sv - mNew);
          sum += w;
          if (dropping && mixedBits(mixedSeed, dropBase + c) < threshold) w = 0;
        }
        pp[pRow + c * 4] = w;
      }
      rowMax[r] = mNew;
      rowSum[r] = rowSum[r]! * alpha + sum;
      rowAlpha[r] = alpha;
    }
    // Padding rows of the last panel (br..brp) hold stale weights; their results are never read.
    // tb[r · dvp + d] = Σ_c pp[r, c] · v[s0 + c, d]
    blockTimesKeys(pp, br, bc, vp, ns, s0, ndv, tb, bad, anyBad);
    for (let r = 0; r < br; r++) {
      const alpha = rowAlpha[r]!;
      for (let d = 0, ao = r * ndv, to = r * dvp; d < ndv; d++) o[ao + d] = o[ao + d]! * alpha + tb[to + d]!;
    }
  }
  return work;
}

/** Normalises the query block's rows into y (and undoes dropout's expected shrink); a row that saw no key gives zeros. */
function finishBlock(p: Problem, s: AttentionScratch, qb: QueryBlock): void {
  const { y, ndv, keptScale } = p;
  const { b, h, i0, br } = qb;
  const headRow = (b * p.nh + h) * p.nl;
  const { rowSum, acc: o } = s;
  for (let r = 0; r < br; r++) {
    const sum = rowSum[r]!;
    const inv = sum === 0 ? 0 : keptScale / sum;
    for (let d = 0, ao = r * ndv, yo = (headRow + i0 + r) * ndv; d < ndv; d++) y[yo + d] = o[ao + d]! * inv;
  }
}
