// The fused attention backward's loops (see attention-grad.ts for the math) as a sequence of resumable steps, laid out
// like the forward's (attention-steps.ts): per kv head its keys are packed once, then each query head of its group is
// visited in blocks of BQ query rows, and each query block in blocks of BK keys; key blocks that causal or window
// masking hides from the whole query block are never computed. Every product (scores q·kᵀ, dP = grad·vᵀ, and the
// gradient products dS·K, dSᵀ·Q, (m·P)ᵀ·grad) runs on the matmul core's packed panels and register tile; the weights
// live only one [BQ, BK] block at a time. A step is the packing of a range of keys, a range of whole key blocks of one
// query block, or the store of a finished block, so the sums (and the result, bit for bit) do not depend on where a
// chunked call pauses.
import type { AttentionGradAttrs, AttentionLseAttrs, CompiledMods } from "@attngraph/graph";
import { blockClass, modifyBlock } from "./attention-mods.js";
import { BLOCK_ALL, BLOCK_NONE } from "@attngraph/graph";
import { dropoutThreshold, fmix32, mixedBits } from "./dropout.js";
import { lastVisibleKey, lastWindowedKey, maskOffset, windowOf } from "./mask.js";
import { blockScores, blockTimesKeys, markNonFiniteKeys } from "./key-block-products.js";
import { ensure64, microKernel, packPanels, roundUp } from "./matmul.js";
import type { QueryBlock } from "./query-block.js";
import type { StridedView } from "./strided.js";

/** Query rows and keys per block, as in the forward: a 64×64 float64 block (32 KiB) and its panels stay in L1/L2. */
const BQ = 64;
const BK = 64;
/** Work of one weight (mask test, exp, dropout test) in multiply-adds of the register tile (as the forward's). */
const EXP_WORK = 36;

/** What a pass computes: the lse rows, or one input's gradient. */
type Mode = "lse" | AttentionGradAttrs["wrt"];

/**
 * Scratch of one attention-lse or attention-grad call. A call that runs its steps back to back borrows the module's
 * instance (nothing else can run in between); a call that pauses between steps owns one.
 */
export class AttentionGradScratch {
  kPack: Float64Array = new Float64Array(0); // K of one kv head as Kᵀ panels: lanes = keys, depth D (scores)
  vPack: Float64Array = new Float64Array(0); // V of one kv head: lanes = keys, depth Dv (dP = grad · vᵀ; wrt q, k)
  kdPack: Float64Array = new Float64Array(0); // K of one kv head: lanes = head dims, depth S (dS · K; wrt q)
  qPack: Float64Array = new Float64Array(0); // one query block: lanes = rows, depth D
  gPack: Float64Array = new Float64Array(0); // grad of one query block: lanes = rows, depth Dv (wrt q, k)
  rPack: Float64Array = new Float64Array(0); // q (wrt k) or grad (wrt v) of one query block: lanes = dims, depth = rows
  sBlock: Float64Array = new Float64Array(0); // raw scores of one block, [BQ, BK]
  dBlock: Float64Array = new Float64Array(0); // grad_i · v_j of one block, [BQ, BK]
  dmBlock: Float64Array = new Float64Array(0); // ∂s'/∂s of one block with a score modification, [BQ, BK]
  aPack: Float64Array = new Float64Array(0); // dS (or m·P) of one block, packed as the gradient product's A operand
  tBlock: Float64Array = new Float64Array(0); // the gradient product of one block
  acc: Float64Array = new Float64Array(0); // wrt q: dq of one query block [BQ, D]; wrt k/v: dk/dv of one kv head [S, ·]
  readonly rowMax = new Float64Array(BQ);
  readonly rowSum = new Float64Array(BQ);
  readonly rowLse = new Float64Array(BQ);
  readonly rowDelta = new Float64Array(BQ); // δ_i = grad_i · out_i
  readonly rowBad = new Uint8Array(BQ); // 1 = the block's q (wrt k) or grad (wrt v) row holds a NaN or ±∞
  anyRowBad = false;
  hidden: Uint8Array = new Uint8Array(0); // 1 = padded key, for the current batch
  badKey: Uint8Array = new Uint8Array(0); // 1 = the key row holds a NaN or ±∞, for the current kv head (wrt q)
  anyBadKey = false;

  /** Grows the buffers a pass of `mode` needs for key length S, head dim D and value dim Dv. */
  fit(mode: Mode, ns: number, nd: number, ndv: number): this {
    const width = Math.max(nd, ndv);
    this.kPack = ensure64(this.kPack, roundUp(ns) * nd);
    this.qPack = ensure64(this.qPack, BQ * nd);
    this.sBlock = ensure64(this.sBlock, BQ * BK);
    if (this.hidden.length < ns) this.hidden = new Uint8Array(ns);
    if (mode === "lse") return this;
    if (mode !== "v") {
      this.dmBlock = ensure64(this.dmBlock, BQ * BK);
      this.vPack = ensure64(this.vPack, roundUp(ns) * ndv);
      this.gPack = ensure64(this.gPack, BQ * ndv);
      this.dBlock = ensure64(this.dBlock, BQ * BK);
    }
    if (mode === "q") {
      this.kdPack = ensure64(this.kdPack, roundUp(nd) * ns);
      if (this.badKey.length < ns) this.badKey = new Uint8Array(ns);
    } else {
      this.rPack = ensure64(this.rPack, roundUp(width) * BQ);
    }
    this.aPack = ensure64(this.aPack, BQ * BK);
    this.tBlock = ensure64(this.tBlock, Math.max(BQ, BK) * roundUp(width));
    this.acc = ensure64(this.acc, mode === "q" ? BQ * nd : ns * (mode === "k" ? nd : ndv));
    return this;
  }
}

/** The scratch of calls that run their steps back to back. */
export const sharedGradScratch = new AttentionGradScratch();

/** What every step reads: inputs, output, dims and the attributes in the form the loops use. */
interface Problem {
  readonly mode: Mode;
  readonly q: StridedView;
  readonly k: StridedView;
  readonly v: StridedView | undefined;
  readonly out: StridedView | undefined;
  readonly grad: StridedView | undefined;
  readonly lse: StridedView | undefined;
  readonly pad: StridedView | undefined;
  readonly y: Float32Array;
  readonly nh: number;
  readonly nhkv: number;
  readonly nl: number;
  readonly ns: number;
  readonly nd: number;
  readonly ndv: number;
  /** Columns of the gradient being built: D (wrt q, k) or Dv (wrt v). */
  readonly width: number;
  readonly off: number;
  readonly causal: boolean;
  readonly win: number;
  /** The softmax's scale of a block's scores: 1 with modifications (the block holds s' already). */
  readonly scale: number;
  readonly mods: CompiledMods | undefined;
  /** The score scale the modifications apply first (and the gradient's factor). */
  readonly modScale: number;
  readonly dropping: boolean;
  readonly mixedSeed: number;
  readonly threshold: number;
  readonly keptScale: number;
}

/** The inputs of attention-grad (attention-lse reads q, k and the padding only). */
export interface AttentionGradInputs {
  readonly q: StridedView;
  readonly k: StridedView;
  readonly v: StridedView;
  readonly out: StridedView;
  readonly grad: StridedView;
  readonly lse: StridedView;
  readonly pad: StridedView | undefined;
}

/** The inputs of attention-lse. */
export type AttentionLseInputs = Pick<AttentionGradInputs, "q" | "k" | "pad">;

/** What problemOf reads of either call's inputs. */
type PassInputs = AttentionLseInputs & Partial<AttentionGradInputs>;

/** Work of one (query, key) pair in multiply-adds: the score, dP when needed, the gradient product, the exp. */
function pairWork(mode: Mode, nd: number, ndv: number): number {
  if (mode === "lse") return nd + EXP_WORK;
  if (mode === "v") return nd + ndv + EXP_WORK;
  return 2 * nd + ndv + EXP_WORK;
}

/** Upper bound of the work of a whole call (every key block visited), in the units steps yield. */
export function attentionGradWork(mode: Mode, q: StridedView, k: StridedView, ndv: number): number {
  const [nb, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  return nb * nh * nl * k.shape[2]! * pairWork(mode, nd, ndv);
}

/** How many keys one query block visits in `chunkWork` units: the `keysPerStep` of a chunked call. */
export function gradKeysPerChunk(mode: Mode, q: StridedView, ndv: number, chunkWork: number): number {
  const rows = Math.max(1, Math.min(BQ, q.shape[2]!));
  return Math.max(1, Math.floor(chunkWork / (rows * pairWork(mode, q.shape[3]!, ndv))));
}

function problemOf(
  mode: Mode,
  g: PassInputs,
  attrs: AttentionLseAttrs & Partial<AttentionGradAttrs>,
  y: Float32Array,
  mods: CompiledMods | undefined,
): Problem {
  const { q, k } = g;
  const [, nh, nl, nd] = q.shape as readonly number[] as [number, number, number, number];
  const ns = k.shape[2]!;
  const ndv = g.v?.shape[3] ?? 0;
  const rate = attrs.dropoutRate ?? 0;
  const dropping = mode !== "lse" && attrs.training === true && rate > 0;
  return {
    mode,
    q,
    k,
    v: g.v,
    out: g.out,
    grad: g.grad,
    lse: g.lse,
    pad: g.pad,
    y,
    nh,
    nhkv: k.shape[1]!,
    nl,
    ns,
    nd,
    ndv,
    width: mode === "v" ? ndv : nd,
    off: maskOffset(attrs.alignment, nl, ns),
    causal: attrs.causal,
    win: windowOf(attrs),
    scale: mods ? 1 : attrs.scale,
    mods,
    modScale: attrs.scale,
    dropping,
    mixedSeed: fmix32(attrs.dropoutSeed ?? 0),
    threshold: dropoutThreshold(rate),
    keptScale: dropping ? Math.fround(1 / (1 - rate)) : 1,
  };
}

/** What one pass reads: an attention-lse call, or an attention-grad call with the input its gradient is of. */
export type AttentionPass =
  | { readonly mode: "lse"; readonly inputs: AttentionLseInputs; readonly attrs: AttentionLseAttrs }
  | {
      readonly mode: AttentionGradAttrs["wrt"];
      readonly inputs: AttentionGradInputs;
      readonly attrs: AttentionGradAttrs;
    };

/**
 * attention-lse (writing [B, H, L]) or attention-grad (attrs.wrt: the gradient) as steps writing row-major into `y`;
 * each yields the work it did. `keysPerStep` bounds the keys one step packs or visits (whole panels, whole key blocks);
 * Infinity gives one step per packing and query block.
 */
export function* attentionPassSteps(
  pass: AttentionPass,
  y: Float32Array,
  scratch: AttentionGradScratch,
  keysPerStep: number,
  mods?: CompiledMods,
): Generator<number, void, void> {
  if (y.length === 0) return;
  const p = problemOf(pass.mode, pass.inputs, pass.attrs, y, mods);
  scratch.fit(p.mode, p.ns, p.nd, p.ndv);
  yield* passSteps(p, scratch, keysPerStep);
}

function* passSteps(p: Problem, s: AttentionGradScratch, keysPerStep: number): Generator<number, void, void> {
  const { mode, nh, nhkv, nl, ns, nd, ndv } = p;
  const nb = p.q.shape[0]!;
  const group = nh / nhkv; // query heads per kv head
  const perKey = mode === "lse" ? nd : mode === "q" ? 2 * nd + ndv : nd + (mode === "k" ? ndv : 0);
  const packStep = keysPerStep === Infinity ? Math.max(ns, 1) : Math.max(4, Math.floor(keysPerStep / 4) * 4);
  const blockStep = keysPerStep === Infinity ? Infinity : Math.max(1, Math.floor(keysPerStep / BK)) * BK;
  const perKv = mode === "k" || mode === "v";
  for (let b = 0; b < nb; b++) {
    for (let g = 0; g < nhkv; g++) {
      // Packed once per kv head, shared by its `group` query heads (GQA by index, never repeated).
      s.anyBadKey = false;
      for (let s0 = 0; s0 < ns; s0 += packStep) {
        const s1 = Math.min(ns, s0 + packStep);
        packKeys(p, s, b, g, s0, s1);
        yield (s1 - s0) * perKey;
      }
      if (perKv) s.acc.fill(0, 0, ns * p.width);
      for (let h = g * group; h < (g + 1) * group; h++) {
        for (let i0 = 0; i0 < nl; i0 += BQ) {
          const br = Math.min(BQ, nl - i0);
          // Keys any row of this block may see by position: [first, end). Blocks outside are fully masked: skipped.
          const first = Math.max(0, lastWindowedKey(i0, p.off, p.win) + 1);
          const end = Math.min(ns, lastVisibleKey(i0 + br - 1, p.off, p.causal, ns) + 1);
          const qb: QueryBlock = { b, h, i0, br };
          startRows(p, s, qb, end > first);
          const visit = mode === "lse" ? lseBlocks : gradBlocks;
          // Panels start at multiples of 4 keys, so the first block starts at `first` rounded down.
          for (let s0 = first & ~3; s0 < end; s0 += blockStep)
            yield visit(p, s, qb, end, s0, Math.min(end, s0 + blockStep));
          if (!perKv) finishRows(p, s, qb);
        }
      }
      if (perKv) {
        storeKeys(p, s, b, g);
        yield ns * p.width;
      }
    }
  }
}

/**
 * Packs keys [s0, s1) of kv head g of batch b (s0 a multiple of 4) as the pass needs them, with the padding flags of
 * batch b; wrt q also marks key rows holding a NaN or ±∞ (x · 0 is NaN exactly for those): their key blocks take a
 * dS · K product that skips zero dS, so a hidden key's row reaches no gradient.
 */
function packKeys(p: Problem, s: AttentionGradScratch, b: number, g: number, s0: number, s1: number): void {
  const { mode, k, v, pad, ns, nd, ndv } = p;
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  const kBase = k.offset + b * ks0 + g * ks1 + s0 * ks2;
  packPanels(k.data, kBase, ks2, ks3, s1 - s0, nd, s.kPack, s0 * nd); // Kᵀ: lanes = keys, depth = D
  if (mode === "q" || mode === "k") {
    const [vs0, vs1, vs2, vs3] = v!.strides as [number, number, number, number];
    packPanels(v!.data, v!.offset + b * vs0 + g * vs1 + s0 * vs2, vs2, vs3, s1 - s0, ndv, s.vPack, s0 * ndv); // lanes = keys
  }
  if (mode === "q") {
    // K by head dims: panel ⌊d / 4⌋ holds S keys, so a range of keys is a range within each panel.
    const kd = s.kdPack;
    for (let d0 = 0; d0 < nd; d0 += 4)
      packPanels(k.data, kBase + d0 * ks3, ks3, ks2, Math.min(4, nd - d0), s1 - s0, kd, d0 * ns + s0 * 4);
    if (markNonFiniteKeys(kd, ns, nd, s0, s1, s.badKey)) s.anyBadKey = true;
  }
  const hidden = s.hidden;
  if (pad === undefined) hidden.fill(0, s0, s1);
  else {
    const pd = pad.data;
    const ps1 = pad.strides[1]!;
    for (let j = s0, o = pad.offset + b * pad.strides[0]! + s0 * ps1; j < s1; j++, o += ps1)
      hidden[j] = pd[o] === 1 ? 1 : 0;
  }
}

/**
 * Starts query block `qb`: the lse pass resets its running max and sum; the gradient passes read lse and
 * δ_i = grad_i · out_i (float64) per row, and pack what the block's products read.
 */
function startRows(p: Problem, s: AttentionGradScratch, qb: QueryBlock, anyKeys: boolean): void {
  const { mode, q, nd, ndv } = p;
  const { b, h, i0, br } = qb;
  if (mode === "lse") {
    s.rowMax.fill(-Infinity, 0, br);
    s.rowSum.fill(0, 0, br);
  } else if (mode === "q") s.acc.fill(0, 0, br * nd);
  if (!anyKeys) return;
  const [qs0, qs1, qs2, qs3] = q.strides as [number, number, number, number];
  const qBase = q.offset + b * qs0 + h * qs1 + i0 * qs2;
  packPanels(q.data, qBase, qs2, qs3, br, nd, s.qPack, 0);
  if (mode === "lse") return;
  const lse = p.lse!;
  for (
    let r = 0, o = lse.offset + b * lse.strides[0]! + h * lse.strides[1]! + i0 * lse.strides[2]!;
    r < br;
    r++, o += lse.strides[2]!
  )
    s.rowLse[r] = lse.data[o]!;
  const grad = p.grad!;
  const [gs0, gs1, gs2, gs3] = grad.strides as [number, number, number, number];
  const gBase = grad.offset + b * gs0 + h * gs1 + i0 * gs2;
  if (mode !== "v") {
    packPanels(grad.data, gBase, gs2, gs3, br, ndv, s.gPack, 0);
    const out = p.out!;
    const [os0, os1, os2, os3] = out.strides as [number, number, number, number];
    const gd = grad.data;
    const od = out.data;
    for (let r = 0; r < br; r++) {
      let delta = 0;
      for (
        let d = 0, go = gBase + r * gs2, oo = out.offset + b * os0 + h * os1 + (i0 + r) * os2;
        d < ndv;
        d++, go += gs3, oo += os3
      )
        delta += gd[go]! * od[oo]!;
      s.rowDelta[r] = delta;
    }
  }
  if (mode === "q") return;
  // wrt k: q rows, wrt v: grad rows, by dims (lanes) over the block's rows (depth); rows holding a NaN or ±∞ make the
  // block's product skip zero coefficients (a hidden or dropped pair adds nothing, not even 0 · NaN).
  const width = p.width;
  if (mode === "k") packPanels(q.data, qBase, qs3, qs2, nd, br, s.rPack, 0);
  else packPanels(grad.data, gBase, gs3, gs2, ndv, br, s.rPack, 0);
  const rp = s.rPack;
  s.anyRowBad = false;
  for (let r = 0; r < br; r++) {
    let z = 0;
    for (let d = 0, o = r << 2; d < width; d += 4, o += br << 2)
      z += (rp[o]! + rp[o + 1]! + rp[o + 2]! + rp[o + 3]!) * 0;
    s.rowBad[r] = z === 0 ? 0 : 1;
    if (z !== 0) s.anyRowBad = true;
  }
}

/** Raw scores of key block [s0, s0 + bc) for the query block: sb[r · BK + c] = q[i0 + r] · k[s0 + c]. */
function scoreBlock(p: Problem, s: AttentionGradScratch, brp: number, s0: number, bcp: number): void {
  const { nd } = p;
  const { qPack: qp, kPack: kp, sBlock: sb } = s;
  blockScores(nd, qp, brp, kp, s0, bcp, sb, BK);
}

/**
 * A pass over the key blocks starting in [sFrom, sTo) of query block `qb` (whole blocks of BK counted from the block's
 * first visible key & ~3); `end` is the block's last visible key + 1. Returns the work done.
 */
type KeyBlocksPass = (
  p: Problem,
  s: AttentionGradScratch,
  qb: QueryBlock,
  end: number,
  sFrom: number,
  sTo: number,
) => number;

/** The lse pass: running max and sum per row, as the forward keeps them. */
const lseBlocks: KeyBlocksPass = (p, s, qb, end, sFrom, sTo) => {
  const { ns, nd, off, causal, win, scale } = p;
  const { i0, br } = qb;
  const { sBlock: sb, rowMax, rowSum, hidden: pad } = s;
  const brp = roundUp(br);
  let work = 0;
  for (let s0 = sFrom; s0 < sTo; s0 += BK) {
    const bc = Math.min(BK, end - s0);
    const cls = blockClass(p.mods, qb, s0, bc);
    if (cls === BLOCK_NONE) continue; // hidden from every row by the mask modification: skipped
    work += br * bc * (nd + EXP_WORK);
    scoreBlock(p, s, brp, s0, roundUp(bc));
    if (p.mods) modifyBlock(p.mods, p.modScale, sb, BK, qb, s0, bc, cls === BLOCK_ALL);
    for (let r = 0; r < br; r++) {
      const i = i0 + r;
      const c0 = Math.max(0, lastWindowedKey(i, off, win) + 1 - s0);
      const c1 = Math.min(bc, lastVisibleKey(i, off, causal, ns) + 1 - s0);
      const sRow = r * BK;
      // Hidden: outside [c0, c1), padded, or a raw score of −∞ (softmax's "masked" marker, as in the forward).
      let mx = -Infinity;
      let nan = false;
      for (let c = c0; c < c1; c++) {
        const sv = sb[sRow + c]!;
        if (pad[s0 + c] !== 0 || sv === -Infinity) continue;
        const x = scale * sv;
        // `>` skips NaN; it is remembered, reaches exp below and makes the row's lse NaN.
        if (x > mx) mx = x;
        else if (Number.isNaN(x)) nan = true;
      }
      if (mx === -Infinity && !nan) continue; // nothing visible in this block for this row
      const mOld = rowMax[r]!;
      const mNew = mOld > mx ? mOld : mx;
      let sum = 0;
      for (let c = c0; c < c1; c++) {
        const sv = sb[sRow + c]!;
        if (pad[s0 + c] === 0 && sv !== -Infinity) sum += Math.exp(scale * sv - mNew);
      }
      rowMax[r] = mNew;
      rowSum[r] = rowSum[r]! * Math.exp(mOld - mNew) + sum;
    }
  }
  return work;
};

/**
 * The gradient passes. Per block: scores (and dP), the coefficients dS (or m · P for wrt v) packed as the A operand,
 * then the block's gradient product added to the float64 accumulator.
 */
const gradBlocks: KeyBlocksPass = (p, s, qb, end, sFrom, sTo) => {
  const { mode, ns, nd, ndv, width, off, causal, win, scale, dropping, mixedSeed, threshold, keptScale } = p;
  const { b, h, i0, br } = qb;
  const headRow = (b * p.nh + h) * p.nl; // row index of [b, h, 0] in [B, H, L, ·]
  const { sBlock: sb, dBlock: db, aPack: ap, tBlock: tb, acc, rowLse, rowDelta, hidden: pad } = s;
  const brp = roundUp(br);
  const wp = roundUp(width);
  const keyLanes = mode !== "q"; // wrt k, v: A = coefficientsᵀ (lanes = keys, depth = rows); wrt q: lanes = rows
  const needDp = mode !== "v";
  let work = 0;
  for (let s0 = sFrom; s0 < sTo; s0 += BK) {
    const bc = Math.min(BK, end - s0);
    const bcp = roundUp(bc);
    const cls = blockClass(p.mods, qb, s0, bc);
    if (cls === BLOCK_NONE) continue; // hidden from every row by the mask modification: no coefficient, skipped
    work += br * bc * pairWork(mode, nd, ndv);
    scoreBlock(p, s, brp, s0, bcp);
    if (p.mods) modifyBlock(p.mods, p.modScale, sb, BK, qb, s0, bc, cls === BLOCK_ALL, needDp ? s.dmBlock : undefined);
    if (needDp) {
      const { gPack: gp, vPack: vp } = s;
      blockScores(ndv, gp, brp, vp, s0, bcp, db, BK);
    }
    for (let r = 0; r < br; r++) {
      const i = i0 + r;
      const c0 = Math.max(0, lastWindowedKey(i, off, win) + 1 - s0);
      const c1 = Math.min(bc, lastVisibleKey(i, off, causal, ns) + 1 - s0);
      const sRow = r * BK;
      // Where coefficient (r, c) goes: lanes = rows: ((r >> 2) · bc + c) · 4 + (r & 3); lanes = keys: ((c >> 2) · br + r) · 4 + (c & 3).
      const aRow = keyLanes ? r << 2 : (r >> 2) * bc * 4 + (r & 3);
      const lse = rowLse[r]!;
      if (lse === -Infinity || c0 >= c1) {
        // A row that sees no key (lse −∞) contributes nothing; nor a row that sees none of this block by position.
        if (keyLanes) for (let c = 0; c < bc; c++) ap[aRow + (c >> 2) * br * 4 + (c & 3)] = 0;
        else for (let c = 0; c < bc; c++) ap[aRow + c * 4] = 0;
        continue;
      }
      const delta = rowDelta[r]!;
      const dropBase = (headRow + i) * ns + s0; // index of weight [b, h, i, s0] in [B, H, L, S]
      for (let c = 0; c < bc; c++) {
        let a = 0;
        const sv = sb[sRow + c]!;
        // Hidden (outside [c0, c1), padded, a raw score of −∞): skipped, its dP never read.
        if (c >= c0 && c < c1 && pad[s0 + c] === 0 && sv !== -Infinity) {
          const pr = Math.exp(scale * sv - lse);
          const m = dropping ? (mixedBits(mixedSeed, dropBase + c) >= threshold ? keptScale : 0) : 1;
          if (!needDp) a = m * pr;
          else if (p.mods === undefined) a = scale * pr * (m * db[sRow + c]! - delta);
          else {
            // dS' times ∂s/∂raw = scale · ∂s'/∂s; a zero dS' stays 0 whatever the derivative (±∞ or NaN there).
            const ds = pr * (m * db[sRow + c]! - delta);
            a = ds === 0 ? 0 : p.modScale * s.dmBlock[sRow + c]! * ds;
          }
        }
        if (keyLanes) ap[aRow + (c >> 2) * br * 4 + (c & 3)] = a;
        else ap[aRow + c * 4] = a;
      }
    }
    if (mode === "q") dqProduct(p, s, br, s0, bc);
    else {
      // tb[c · wp + d] = Σ_r a[r, c] · x[r, d], x = q (wrt k) or grad (wrt v); then into the kv head's accumulator.
      const rp = s.rPack;
      if (!s.anyRowBad) {
        for (let c = 0; c < bcp; c += 4)
          for (let d = 0; d < wp; d += 4) microKernel(br, ap, c * br, rp, d * br, tb, c * wp + d, wp);
      } else {
        // The same sums, in the same order, over the coefficients ≠ 0 only (no 0 · NaN from a q or grad row).
        for (let c = 0; c < bc; c++) {
          const to = c * wp;
          tb.fill(0, to, to + width);
          const aCol = (c >> 2) * br * 4 + (c & 3);
          for (let r = 0; r < br; r++) {
            const a = ap[aCol + r * 4]!;
            if (a === 0) continue;
            for (let d = 0, xo = r * 4; d < width; d++)
              tb[to + d] = tb[to + d]! + a * rp[xo + (d >> 2) * br * 4 + (d & 3)]!;
          }
        }
      }
      for (let c = 0; c < bc; c++) {
        for (let d = 0, ao = (s0 + c) * width, to = c * wp; d < width; d++) acc[ao + d] = acc[ao + d]! + tb[to + d]!;
      }
    }
  }
  return work;
};

/** wrt q: tb[r · Dp + d] = Σ_c dS[r, c] · k[s0 + c, d], added into the query block's dq rows. */
function dqProduct(p: Problem, s: AttentionGradScratch, br: number, s0: number, bc: number): void {
  const { ns, nd } = p;
  const { aPack: ap, kdPack: kd, tBlock: tb, acc } = s;
  const dp = roundUp(nd);
  // A hidden key's NaN or ±∞ row adds nothing through its dS of 0.
  blockTimesKeys(ap, br, bc, kd, ns, s0, nd, tb, s.badKey, s.anyBadKey);
  for (let r = 0; r < br; r++) {
    for (let d = 0, ao = r * nd, to = r * dp; d < nd; d++) acc[ao + d] = acc[ao + d]! + tb[to + d]!;
  }
}

/** Stores a finished query block: lse rows (−∞ for a row that saw no key) or dq rows. */
function finishRows(p: Problem, s: AttentionGradScratch, qb: QueryBlock): void {
  const { y, nd } = p;
  const { b, h, i0, br } = qb;
  const headRow = (b * p.nh + h) * p.nl + i0;
  if (p.mode === "lse") {
    const { rowMax, rowSum } = s;
    for (let r = 0; r < br; r++) {
      const sum = rowSum[r]!;
      y[headRow + r] = sum === 0 ? -Infinity : rowMax[r]! + Math.log(sum);
    }
    return;
  }
  y.set(s.acc.subarray(0, br * nd), headRow * nd);
}

/** Stores the finished dk or dv rows of kv head g (keys no query sees are exactly 0). */
function storeKeys(p: Problem, s: AttentionGradScratch, b: number, g: number): void {
  const n = p.ns * p.width;
  p.y.set(s.acc.subarray(0, n), (b * p.nhkv + g) * n);
}
