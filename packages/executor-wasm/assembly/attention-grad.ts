// The fused attention backward (attention-lse, attention-grad), FlashAttention-2 style on the forward's structure
// (assembly/attention.ts): for each block of BQ query rows of one head it streams over BK-key blocks, skipping key
// blocks a causal or window mask hides from the whole query block, and never holds more than one [BQ, BK] block of
// scores. A weight is recomputed where it is needed as p = exp(scale · q·k − lse) from the saved lse.
//   lse:    the running max and sum of the forward's softmax, lse = m + log Σ (−∞ for a row that sees no key).
//   wrt q:  dS = scale · p · (m · dO·vᵀ − δ) per block, dq += dS · K: a [BQ, D] accumulator per query block.
//   wrt k:  the same dS, dk[block] += dSᵀ · Q: a [S, D] accumulator for the whole kv head (every query head of the
//           group and every query block adds into it), written out once all of them ran (`attentionGradFlush`).
//   wrt v:  dv[block] += (m · p)ᵀ · dO, likewise.
// All three products run on 4×8 register tiles (the matmul's `micro`, and `microT` below, which reads its A operand
// transposed, so dSᵀ is never formed). Each block's product is summed in float32 (64 terms at most) into a tile, and
// the tiles are added into float64 accumulators: sums over L · H/Hkv terms lose nothing to a long float32 chain.
// A hidden key (mask, window, padding) or a row whose lse is −∞ gets dS and m · p exactly 0, whatever its scores or
// value row hold; a product term whose weight is exactly 0 adds nothing, not even a NaN or ±∞ of the other operand:
// a block where that operand holds one takes a scalar product that skips zero weights (as the forward).
// Like the forward, the host drives it in resumable pieces (src/kernels/attention-grad.ts): `attentionGradPack` packs a
// range of keys of one kv head, `attentionGradBlock` runs some key blocks of one query block (its state kept in the
// scratch between calls), `attentionGradFlush` writes a kv head's dk or dv.
import { lastVisibleKey, lastWindowedKey } from "./mask";
import { micro, INIT_ZERO } from "./matmul";
import { exp4, hmax, hsum, madd } from "./simd";
import { promoteHigh, promoteLow } from "./layer-norm";
import { at } from "./strided";
import { RunParams } from "./attention";
import { exprDerivative, exprFailed, exprRun, exprTileIn, exprTileOut, TILE_LD } from "./expr-program";

const BQ: i32 = 64;
const BK: i32 = 64;

/** What a call computes: attention-lse, or attention-grad with respect to q, k or v. */
const MODE_LSE: i32 = 0;
const MODE_Q: i32 = 1;
const MODE_K: i32 = 2;
const MODE_V: i32 = 3;

@inline function f4(n: i32): usize {
  return <usize>n << 2;
}

@inline function f8(n: i32): usize {
  return <usize>n << 3;
}

/** attentionGradPack's and attentionGradFlush's parameters (see there), 4 bytes a field in this order. */
@unmanaged export class GradPackParams {
  kb: usize; ks2: i32; ks3: i32;
  vb: usize; vs2: i32; vs3: i32;
  pb: usize; ps1: i32;
  ns: i32; nd: i32; ndv: i32;
  s0: i32; s1: i32;
  mode: i32; dst: usize; scratch: usize;
}

/** attentionGradBlock's parameters (see there); booleans are 0 or 1. */
@unmanaged export class GradBlockParams {
  qb: usize; qs2: i32;
  gb: usize; gs2: i32;
  ob: usize; os2: i32;
  lb: usize; ls2: i32;
  i0: i32; br: i32;
  ns: i32; nd: i32; ndv: i32;
  causal: i32; off: i32; win: i32; scale: f32;
  dropping: i32; mixedSeed: u32; threshold: u32; keptScale: f32;
  padded: i32; headRow: i32; anyBad: i32; fromBlock: i32; maxBlocks: i32;
  mode: i32; out: usize; scratch: usize;
  // A score or mask modification (expr-program.ts): the program (0: none; for wrt q and k it also gives ∂s'/∂score),
  // its registers and status (this call's own), and the batch and head the block is of (the expression's b and h).
  prog: usize; regs: usize; bi: i32; hi: i32;
}

/**
 * Bytes of the params `attentionGradRun` reads (a GradPackParams, a GradBlockParams and a RunParams block), for the
 * host's check against what it reserves.
 */
export function attentionGradParamsBytes(): i32 {
  return <i32>(offsetof<GradPackParams>() + offsetof<GradBlockParams>() + offsetof<RunParams>());
}

// ---- the scratch ----
// Per kv head: the float64 accumulator of dk or dv [nsP, W] (wrt k, v), Kᵀ panels (8 keys × D per panel), Vᵀ panels
// (8 keys × Dv, wrt q and k), K panels (8 dims × nsP keys per panel, wrt q), padding flags and bad-key flags [nsP].
// Per query block: the float64 dq accumulator [BQ, W] (wrt q), scores then weights [BQ, BK], dP then dS [BQ, BK], one
// product tile [BQ, W], the block's Q or dO packed as 8-dim panels [W / 8, BQ, 8] (wrt k, v), and per row: lse, δ,
// running max, running sum, bad-row flags, and one flag "some row is bad". W: D (wrt q, k) or Dv (wrt v) padded to 8.

let gAcc: usize = 0;
let gDq: usize = 0;
let gKT: usize = 0;
let gVT: usize = 0;
let gKD: usize = 0;
let gHidden: usize = 0;
let gBadKey: usize = 0;
let gS: usize = 0;
let gD: usize = 0;
let gTile: usize = 0;
let gPanel: usize = 0;
let gLse: usize = 0;
let gDelta: usize = 0;
let gMax: usize = 0;
let gSum: usize = 0;
let gBadRow: usize = 0;
let gAnyBadRow: usize = 0;

/** Width W of the accumulators and tiles of `mode` (0 for lse). */
@inline function widthOf(mode: i32, nd: i32, ndv: i32): i32 {
  return mode == MODE_V ? (ndv + 7) & ~7 : mode == MODE_LSE ? 0 : (nd + 7) & ~7;
}

/** Sets the region addresses for `mode`; returns the end of the last one. */
function layout(scratch: usize, ns: i32, nd: i32, ndv: i32, mode: i32): usize {
  const nsP = (ns + 7) & ~7;
  const w = widthOf(mode, nd, ndv);
  const kv = mode == MODE_K || mode == MODE_V;
  let o: usize = (scratch + 15) & ~15;
  gAcc = o;
  o += kv ? f8(nsP * w) : 0;
  gDq = o;
  o += mode == MODE_Q ? f8(BQ * w) : 0;
  gKT = o;
  o += f4(nsP * nd);
  gVT = o;
  o += mode == MODE_Q || mode == MODE_K ? f4(nsP * ndv) : 0;
  gKD = o;
  o += mode == MODE_Q ? f4(w * nsP) : 0;
  gHidden = o;
  o += f4(nsP);
  gBadKey = o;
  o += f4(nsP);
  gS = o;
  o += f4(BQ * BK);
  gD = o;
  o += mode == MODE_LSE ? 0 : f4(BQ * BK);
  gTile = o;
  o += f4(max(BQ, BK) * w);
  gPanel = o;
  o += kv ? f4(w * BQ) : 0;
  gLse = o;
  gDelta = gLse + f4(BQ);
  gMax = gDelta + f4(BQ);
  gSum = gMax + f4(BQ);
  gBadRow = gSum + f4(BQ);
  gAnyBadRow = gBadRow + f4(BQ);
  return gAnyBadRow + 16;
}

/** Bytes of scratch the three entry points need for key length S, head dims D and Dv, and `mode`. */
export function attentionGradScratchBytes(ns: i32, nd: i32, ndv: i32, mode: i32): i32 {
  return <i32>layout(0, ns, nd, ndv, mode) + 16;
}

/** 1 when the n elements at p (element stride s) hold a NaN or ±∞. */
@inline function nonFinite(p: usize, s: i32, n: i32): bool {
  let z: f32 = 0;
  for (let d: i32 = 0; d < n; d++) z += load<f32>(at(p, d * s)) * 0; // NaN exactly for NaN and ±∞
  return z != 0;
}

/**
 * Packs keys [s0, s1) of one kv head (s0 a multiple of 8; s1 a multiple of 8 or S): the Kᵀ panels, for wrt q and k the
 * Vᵀ panels, for wrt q the K panels and bad-key flags (a NaN or ±∞ in the key row), and the keys' padding flags; for
 * wrt k and v it zeroes their accumulator rows. `kb`, `vb`: k[b, g, 0, 0] and v[b, g, 0, 0] (strides ks2, ks3 and vs2,
 * vs3); `pb`: pad[b, 0] (stride ps1), or 0 for none. Returns 1 when one of these keys is bad (wrt q), else 0.
 */
export function attentionGradPack(p: GradPackParams): i32 {
  const kb = p.kb, ks2 = p.ks2, ks3 = p.ks3, vb = p.vb, vs2 = p.vs2, vs3 = p.vs3, pb = p.pb, ps1 = p.ps1;
  const ns = p.ns, nd = p.nd, ndv = p.ndv, s0 = p.s0, s1 = p.s1, mode = p.mode;
  layout(p.scratch, ns, nd, ndv, mode);
  const nsP = (ns + 7) & ~7;
  const w = widthOf(mode, nd, ndv);
  const pEnd = s1 == ns ? nsP : s1; // the last panel is padded with zero keys
  let o = gKT + f4(s0 * nd);
  for (let p0 = s0; p0 < pEnd; p0 += 8) {
    for (let d: i32 = 0; d < nd; d++) {
      for (let jj: i32 = 0; jj < 8; jj++, o += 4) store<f32>(o, p0 + jj < ns ? load<f32>(at(kb, (p0 + jj) * ks2 + d * ks3)) : 0);
    }
  }
  if (mode == MODE_Q || mode == MODE_K) {
    o = gVT + f4(s0 * ndv);
    for (let p0 = s0; p0 < pEnd; p0 += 8) {
      for (let d: i32 = 0; d < ndv; d++) {
        for (let jj: i32 = 0; jj < 8; jj++, o += 4) store<f32>(o, p0 + jj < ns ? load<f32>(at(vb, (p0 + jj) * vs2 + d * vs3)) : 0);
      }
    }
  }
  let anyBad: i32 = 0;
  if (mode == MODE_Q) {
    for (let dp: i32 = 0; dp < w; dp += 8) {
      o = gKD + f4(dp * nsP + s0 * 8);
      for (let s = s0; s < pEnd; s++) {
        for (let jj: i32 = 0; jj < 8; jj++, o += 4) store<f32>(o, s < ns && dp + jj < nd ? load<f32>(at(kb, s * ks2 + (dp + jj) * ks3)) : 0);
      }
    }
    for (let s = s0; s < pEnd; s++) {
      const bad = s < ns && nonFinite(at(kb, s * ks2), ks3, nd);
      store<f32>(gBadKey + f4(s), bad ? 1 : 0);
      if (bad) anyBad = 1;
    }
  }
  for (let j = s0; j < s1; j++) store<f32>(gHidden + f4(j), pb != 0 && load<f32>(at(pb, j * ps1)) == 1 ? 1 : 0);
  if (mode == MODE_K || mode == MODE_V) memory.fill(gAcc + f8(s0 * w), 0, f8((pEnd - s0) * w));
  return anyBad;
}

/** Writes keys [s0, s1) of the kv head's float64 dk or dv accumulator as float32 rows of D or Dv at `dst` (dense). */
export function attentionGradFlush(p: GradPackParams): void {
  const ns = p.ns, nd = p.nd, ndv = p.ndv, s0 = p.s0, s1 = p.s1, mode = p.mode, dst = p.dst;
  layout(p.scratch, ns, nd, ndv, mode);
  const w = widthOf(mode, nd, ndv);
  const n = mode == MODE_V ? ndv : nd;
  for (let s = s0; s < s1; s++) {
    const a = gAcc + f8(s * w);
    const y = dst + f4(s * n);
    for (let d: i32 = 0; d < n; d++) store<f32>(y + f4(d), <f32>load<f64>(a + f8(d)));
  }
}

/**
 * A 4×8 tile whose A operand is read transposed: C[rr, 0..8] = Σ_k A[k, rr] · Bp[k, 0..8] for rr < 4, where A[k, rr]
 * is the float at a + k · lda + rr · 4 (4 adjacent columns of a row-major block) and `bp` a packed panel (8 floats a k).
 */
@inline function microT(kc: i32, a: usize, lda: usize, bp: usize, c: usize, ldc: usize): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  for (let k: i32 = 0; k < kc; k++) {
    const b0 = v128.load(bp);
    const b1 = v128.load(bp, 16);
    let x = v128.load32_splat(a);
    c00 = madd(x, b0, c00); c01 = madd(x, b1, c01);
    x = v128.load32_splat(a, 4);
    c10 = madd(x, b0, c10); c11 = madd(x, b1, c11);
    x = v128.load32_splat(a, 8);
    c20 = madd(x, b0, c20); c21 = madd(x, b1, c21);
    x = v128.load32_splat(a, 12);
    c30 = madd(x, b0, c30); c31 = madd(x, b1, c31);
    a += lda; bp += 32;
  }
  v128.store(c, c00); v128.store(c, c01, 16);
  v128.store(c + ldc, c10); v128.store(c + ldc, c11, 16);
  v128.store(c + 2 * ldc, c20); v128.store(c + 2 * ldc, c21, 16);
  v128.store(c + 3 * ldc, c30); v128.store(c + 3 * ldc, c31, 16);
}

/** C[r, ·] = rows [r, r + 4) of A (row stride lda bytes, `kc` deep, rows past `rows` repeat the first) · Bp panels. */
@inline function rowsTimesPanels(kc: i32, a: usize, lda: usize, rows: i32, bp: usize, bpStep: usize, cols: i32, c: usize, ldc: usize): void {
  const a1 = rows > 1 ? a + lda : a;
  const a2 = rows > 2 ? a1 + lda : a;
  const a3 = rows > 3 ? a2 + lda : a;
  for (let dp: i32 = 0; dp < cols; dp += 8) micro(kc, a, a1, a2, a3, bp + <usize>(dp >> 3) * bpStep, c + f4(dp), ldc, INIT_ZERO, 0);
}

/** acc[r, 0..w) (float64, row stride w) += tile[r, 0..w) (float32, row stride w) for `rows` rows; w a multiple of 8. */
@inline function addTile(acc: usize, tile: usize, rows: i32, w: i32): void {
  const n = rows * w;
  for (let e: i32 = 0; e < n; e += 4) {
    const t = v128.load(tile + f4(e));
    const a = acc + f8(e);
    v128.store(a, f64x2.add(v128.load(a), promoteLow(t)));
    v128.store(a, f64x2.add(v128.load(a, 16), promoteHigh(t)), 16);
  }
}

/** The keep factors of 4 adjacent weights: keptScale where dropout keeps element index i .. i + 3, else 0. */
@inline function keep4(mixedSeed: v128, i: u32, threshold: v128, kept: v128): v128 {
  let h = i32x4.add(i32x4.splat(i), i32x4(0, 1, 2, 3));
  h = v128.xor(mixedSeed, i32x4.mul(h, i32x4.splat(<i32>0x9e3779b9)));
  h = v128.xor(h, i32x4.shr_u(h, 16));
  h = i32x4.mul(h, i32x4.splat(<i32>0x85ebca6b));
  h = v128.xor(h, i32x4.shr_u(h, 13));
  h = i32x4.mul(h, i32x4.splat(<i32>0xc2b2ae35));
  h = v128.xor(h, i32x4.shr_u(h, 16));
  return v128.and(kept, i32x4.ge_u(h, threshold));
}

/**
 * Runs up to `maxBlocks` key blocks of query block [i0, i0 + br) of one head, from its block number `fromBlock` on
 * (0 starts the query block), on the keys `attentionGradPack` left in the scratch. When the query block's last key
 * block is done, it writes its rows (lse: out [B, H, L]; wrt q: out [B, H, L, D], dense; their row [b, h, 0] is
 * `headRow`) and returns 0; else the number of key blocks still to run. wrt k and v add into the kv head's accumulator
 * instead (written by `attentionGradFlush`).
 * `qb`, `gb`, `ob`: q, grad and out at [b, h, 0, 0], unit stride along their last axis (row strides qs2, gs2, os2);
 * `lb`: lse[b, h, 0] (stride ls2). `anyBad`: wrt q, 1 when some key row of the kv head holds a NaN or ±∞.
 */
export function attentionGradBlock(p: GradBlockParams): i32 {
  const qb = p.qb, qs2 = p.qs2, gb = p.gb, gs2 = p.gs2, ob = p.ob, os2 = p.os2, lb = p.lb, ls2 = p.ls2;
  const i0 = p.i0, br = p.br, ns = p.ns, nd = p.nd, ndv = p.ndv;
  const causal = p.causal != 0, off = p.off, win = p.win, scale = p.scale;
  const dropping = p.dropping != 0, threshold = p.threshold, keptScale = p.keptScale;
  const padded = p.padded != 0, headRow = p.headRow, anyBad = p.anyBad != 0, fromBlock = p.fromBlock, maxBlocks = p.maxBlocks;
  const mode = p.mode, out = p.out, prog = p.prog, regs = p.regs;
  layout(p.scratch, ns, nd, ndv, mode);
  const nsP = (ns + 7) & ~7;
  const w = widthOf(mode, nd, ndv);
  const ninf = f32x4.splat(-Infinity);
  const vscale = f32x4.splat(scale);
  // With a modification the tile holds s' already scaled (and modified): the weights take it as it is.
  const vs = prog != 0 ? f32x4.splat(1) : vscale;
  const zero = f32x4.splat(0);
  const dmod = prog != 0 ? exprDerivative(prog, regs) : 0;
  const ldsB = f4(BK);
  const ldwB = f4(w);

  // Keys any row of this block may see by position: [first, end); key blocks start at `first` rounded down to a panel.
  const first = max(0, lastWindowedKey(i0, off, win) + 1);
  const end = min(ns, lastVisibleKey(i0 + br - 1, off, causal, ns) + 1);
  const blocks = end > (first & ~7) ? (end - (first & ~7) + BK - 1) / BK : 0;
  if (fromBlock == 0) startQueryBlock(p, w);
  const anyBadRow = load<i32>(gAnyBadRow) != 0;
  const stop = <i32>min(<i64>blocks, <i64>fromBlock + <i64>maxBlocks);
  const vMixed = i32x4.splat(<i32>p.mixedSeed);
  const vThreshold = i32x4.splat(<i32>threshold);
  const vKept = f32x4.splat(keptScale);
  for (let blk = fromBlock; blk < stop; blk++) {
    const s0 = (first & ~7) + blk * BK;
    const bc = min(BK, end - s0);
    const bc4 = (bc + 3) & ~3;
    const bc8 = (bc + 7) & ~7;
    // Raw scores of the block: S[r, c] = q[i0 + r] · k[s0 + c]; and for wrt q and k, dP[r, c] = grad[i0 + r] · v[s0 + c].
    for (let r: i32 = 0; r < br; r += 4) {
      const rows = min(4, br - r);
      const a0 = at(qb, (i0 + r) * qs2);
      const a1 = rows > 1 ? at(a0, qs2) : a0;
      const a2 = rows > 2 ? at(a1, qs2) : a0;
      const a3 = rows > 3 ? at(a2, qs2) : a0;
      for (let c: i32 = 0; c < bc8; c += 8) micro(nd, a0, a1, a2, a3, gKT + f4((s0 + c) * nd), gS + f4(r * BK + c), ldsB, INIT_ZERO, 0);
    }
    if (mode == MODE_Q || mode == MODE_K) {
      for (let r: i32 = 0; r < br; r += 4) {
        const rows = min(4, br - r);
        const a0 = at(gb, (i0 + r) * gs2);
        const a1 = rows > 1 ? at(a0, gs2) : a0;
        const a2 = rows > 2 ? at(a1, gs2) : a0;
        const a3 = rows > 3 ? at(a2, gs2) : a0;
        for (let c: i32 = 0; c < bc8; c += 8) micro(ndv, a0, a1, a2, a3, gVT + f4((s0 + c) * ndv), gD + f4(r * BK + c), ldsB, INIT_ZERO, 0);
      }
    }
    if (prog != 0) {
      // The modification over the whole tile, as the forward: gS becomes s' where kept, −∞ elsewhere; wrt q and k the
      // program leaves ∂s'/∂score in its register. An index error stops the call.
      exprTileIn(regs, gS, br, i0, s0, bc, ns, causal, off, win, padded, gHidden, scale);
      if (exprRun(prog, regs, br * TILE_LD, p.bi, p.hi, i0, s0) != 0) return 0;
      exprTileOut(prog, regs, gS, br);
    }
    for (let r: i32 = 0; r < br; r++) {
      const i = i0 + r;
      const row = gS + f4(r * BK);
      const drow = gD + f4(r * BK);
      // This row's visible columns by position: [c0, c1).
      const c0 = max(0, lastWindowedKey(i, off, win) + 1 - s0);
      const c1 = min(bc, lastVisibleKey(i, off, causal, ns) + 1 - s0);
      const lse = load<f32>(gLse + f4(r));
      if (c1 <= c0 || (mode != MODE_LSE && lse == -Infinity)) {
        // Nothing this row sees here (or a row that sees no key at all): weights and score gradients exactly 0.
        if (mode == MODE_V) memory.fill(row, 0, f4(bc4));
        else if (mode != MODE_LSE) memory.fill(drow, 0, f4(bc4));
        continue;
      }
      if (prog == 0) {
        for (let c: i32 = 0; c < c0; c++) store<f32>(row + f4(c), -Infinity);
        for (let c = c1; c < bc4; c++) store<f32>(row + f4(c), -Infinity);
        if (padded) for (let c = c0; c < c1; c++) if (load<f32>(gHidden + f4(s0 + c)) != 0) store<f32>(row + f4(c), -Infinity);
      }
      if (mode == MODE_LSE) {
        // The forward's running max and sum (a raw −∞ stays −∞: the "hidden" marker).
        // pmax (one maxps; f32x4.max is a multi-instruction sequence in engines) passes a NaN lane over, but a NaN
        // score still makes the row's sum, and so its lse, NaN; only a block whose every visible score is NaN needs
        // its NaN found here.
        let vmax = ninf;
        for (let c: i32 = 0; c < bc4; c += 4) {
          const s = v128.load(row + f4(c));
          const x = v128.bitselect(f32x4.mul(s, vs), ninf, f32x4.ne(s, ninf));
          v128.store(row + f4(c), x);
          vmax = f32x4.pmax(vmax, x);
        }
        let mx = hmax(vmax);
        if (mx == -Infinity) {
          for (let c: i32 = 0; c < bc4; c++) if (isNaN(load<f32>(row + f4(c)))) mx = NaN;
          if (mx == -Infinity) continue;
        }
        const mOld = load<f32>(gMax + f4(r));
        const mNew = max(mOld, mx);
        const alpha = Mathf.exp(mOld - mNew); // 0 on the row's first visible block
        const vm = f32x4.splat(mNew);
        let vsum = f32x4.splat(0);
        for (let c: i32 = 0; c < bc4; c += 4) {
          const x = v128.load(row + f4(c));
          vsum = f32x4.add(vsum, v128.and(exp4(f32x4.sub(x, vm)), f32x4.ne(x, ninf)));
        }
        store<f32>(gMax + f4(r), mNew);
        store<f32>(gSum + f4(r), load<f32>(gSum + f4(r)) * alpha + hsum(vsum));
        continue;
      }
      // p = exp(scale · s − lse) on visible keys, 0 on hidden ones; m: the dropout keep factor (1 without dropout).
      const vlse = f32x4.splat(lse);
      const vdelta = f32x4.splat(load<f32>(gDelta + f4(r)));
      const base = <u32>(headRow + i) * <u32>ns + <u32>s0; // index of weight [b, h, i, s0] in [B, H, L, S], mod 2³²
      for (let c: i32 = 0; c < bc4; c += 4) {
        const s = v128.load(row + f4(c));
        const visible = f32x4.ne(s, ninf);
        const pw = v128.and(exp4(f32x4.sub(f32x4.mul(s, vs), vlse)), visible);
        if (mode == MODE_V) {
          v128.store(row + f4(c), dropping ? f32x4.mul(pw, keep4(vMixed, base + <u32>c, vThreshold, vKept)) : pw);
        } else {
          let dp = v128.load(drow + f4(c));
          if (dropping) dp = f32x4.mul(dp, keep4(vMixed, base + <u32>c, vThreshold, vKept));
          if (prog == 0) {
            // dS = scale · p · (m · dP − δ), exactly 0 on a hidden key whatever its value row gave dP.
            v128.store(drow + f4(c), v128.and(f32x4.mul(f32x4.mul(vscale, pw), f32x4.sub(dp, vdelta)), visible));
          } else {
            // dS' = p · (m · dP − δ) (0 on a hidden key), reaching the raw score as dS' · scale · ∂s'/∂score; where dS'
            // is 0 the derivative is not multiplied in (a hidden key's ∞ derivative must not make 0 · ∞ = NaN).
            const dsp = v128.and(f32x4.mul(pw, f32x4.sub(dp, vdelta)), visible);
            const dm = dmod == 0 ? vscale : f32x4.mul(vscale, v128.load(dmod + f4(r * TILE_LD + c)));
            v128.store(drow + f4(c), v128.bitselect(f32x4.mul(dsp, dm), zero, f32x4.ne(dsp, zero)));
          }
        }
      }
    }
    if (mode == MODE_LSE) continue;
    if (mode == MODE_Q) {
      // tile[r, ·] = Σ_c dS[r, c] · k[s0 + c, ·]; then dq rows += tile.
      let badBlock = false;
      if (anyBad) for (let c: i32 = 0; c < bc4 && s0 + c < ns; c++) if (load<f32>(gBadKey + f4(s0 + c)) != 0) badBlock = true;
      if (!badBlock) {
        for (let r: i32 = 0; r < br; r += 4) rowsTimesPanels(bc4, gD + f4(r * BK), ldsB, min(4, br - r), gKD + f4(s0 * 8), f4(8 * nsP), w, gTile + f4(r * w), ldwB);
      } else {
        // The same sums over the keys with a dS ≠ 0 only; K panel element (s, d) at (d & ~7) · nsP + s · 8 + (d & 7).
        memory.fill(gTile, 0, f4(br * w));
        for (let r: i32 = 0; r < br; r++) {
          const drow = gD + f4(r * BK);
          const trow = gTile + f4(r * w);
          for (let c: i32 = 0; c < bc4; c++) {
            const ds = load<f32>(drow + f4(c));
            if (ds == 0) continue;
            for (let d: i32 = 0; d < nd; d++) {
              const t = trow + f4(d);
              store<f32>(t, load<f32>(t) + ds * load<f32>(gKD + f4((d & ~7) * nsP + (s0 + c) * 8 + (d & 7))));
            }
          }
        }
      }
      addTile(gDq, gTile, br, w);
    } else {
      // tile[c, ·] = Σ_r A[r, c] · X[r, ·] with A = dS, X = q (wrt k) or A = m · p, X = grad (wrt v); then the kv head's
      // accumulator rows s0 + c += tile.
      const a = mode == MODE_K ? gD : gS;
      if (!anyBadRow) {
        for (let c: i32 = 0; c < bc; c += 4) {
          for (let dp: i32 = 0; dp < w; dp += 8) microT(br, a + f4(c), ldsB, gPanel + f4(dp * BQ), gTile + f4(c * w + dp), ldwB);
        }
      } else {
        // The same sums over the rows with a weight ≠ 0 only; panel element (r, d) at (d & ~7) · BQ + r · 8 + (d & 7).
        const n = mode == MODE_K ? nd : ndv;
        memory.fill(gTile, 0, f4(bc * w));
        for (let r: i32 = 0; r < br; r++) {
          const arow = a + f4(r * BK);
          for (let c: i32 = 0; c < bc; c++) {
            const x = load<f32>(arow + f4(c));
            if (x == 0) continue;
            const trow = gTile + f4(c * w);
            for (let d: i32 = 0; d < n; d++) {
              const t = trow + f4(d);
              store<f32>(t, load<f32>(t) + x * load<f32>(gPanel + f4((d & ~7) * BQ + r * 8 + (d & 7))));
            }
          }
        }
      }
      addTile(gAcc + f8(s0 * w), gTile, bc, w);
    }
  }
  if (stop < blocks) return blocks - stop;
  if (mode == MODE_LSE) {
    for (let r: i32 = 0; r < br; r++) {
      const m = load<f32>(gMax + f4(r));
      const y = out + f4(headRow + i0 + r);
      // m + log Σ exp(x − m); a row that saw no key keeps m = −∞ (and a NaN score made m NaN).
      store<f32>(y, m == -Infinity ? -Infinity : <f32>(<f64>m + Math.log(<f64>load<f32>(gSum + f4(r)))));
    }
  } else if (mode == MODE_Q) {
    for (let r: i32 = 0; r < br; r++) {
      const a = gDq + f8(r * w);
      const y = out + f4((headRow + i0 + r) * nd);
      for (let d: i32 = 0; d < nd; d++) store<f32>(y + f4(d), <f32>load<f64>(a + f8(d)));
    }
  }
  return 0;
}

/**
 * A whole unchunked call in one go: for each batch b and kv head g, `attentionGradPack` over all its keys; for each
 * query head h of its group and each query block, `attentionGradBlock` over all its key blocks; wrt k and v, then
 * `attentionGradFlush` of the kv head's rows. The very calls, in the very order, that the host's steps make one by one
 * (src/kernels/attention-grad.ts), so the numbers are the same bit for bit; only the per-head calls from the host are
 * saved. `pack` and `block` hold the call's fields with their per-head addresses (kb, vb, pb; qb, gb, ob, lb) at
 * b = 0, g = 0, h = 0 (0 for what the call lacks, with batch and head strides 0), `block.out` the output's start and
 * `maxBlocks` at least the key blocks of a query block; the loop rewrites the per-head and per-block fields in place.
 */
export function attentionGradRun(pack: GradPackParams, block: GradBlockParams, run: RunParams): void {
  const nb = run.nb, nh = run.nh, nhkv = run.nhkv, nl = run.nl;
  if (nhkv <= 0) return;
  const group = nh / nhkv;
  const qs0 = run.qs0, qs1 = run.qs1, ks0 = run.ks0, ks1 = run.ks1, vs0 = run.vs0, vs1 = run.vs1, ps0 = run.ps0;
  const gs0 = run.gs0, gs1 = run.gs1, os0 = run.os0, os1 = run.os1, ls0 = run.ls0, ls1 = run.ls1;
  const kb = pack.kb, vb = pack.vb, pb = pack.pb, qb = block.qb, gb = block.gb, ob = block.ob, lb = block.lb;
  const ns = pack.ns, mode = pack.mode;
  const perKv = mode == MODE_K || mode == MODE_V;
  const flushWidth = mode == MODE_V ? pack.ndv : pack.nd;
  const out = block.out;
  pack.s0 = 0;
  pack.s1 = ns;
  block.fromBlock = 0;
  for (let b: i32 = 0; b < nb; b++) {
    for (let g: i32 = 0; g < nhkv; g++) {
      pack.kb = at(kb, b * ks0 + g * ks1);
      pack.vb = vb == 0 ? 0 : at(vb, b * vs0 + g * vs1);
      pack.pb = pb == 0 ? 0 : at(pb, b * ps0);
      pack.dst = perKv ? at(out, (b * nhkv + g) * ns * flushWidth) : 0;
      block.anyBad = ns > 0 ? attentionGradPack(pack) : 0;
      for (let h = g * group; h < (g + 1) * group; h++) {
        block.qb = at(qb, b * qs0 + h * qs1);
        block.gb = gb == 0 ? 0 : at(gb, b * gs0 + h * gs1);
        block.ob = ob == 0 ? 0 : at(ob, b * os0 + h * os1);
        block.lb = lb == 0 ? 0 : at(lb, b * ls0 + h * ls1);
        block.headRow = (b * nh + h) * nl;
        block.bi = b;
        block.hi = h;
        for (let i0: i32 = 0; i0 < nl; i0 += BQ) {
          block.i0 = i0;
          block.br = min(BQ, nl - i0);
          attentionGradBlock(block);
          if (block.prog != 0 && exprFailed(block.regs)) return; // the host reports the index error
        }
      }
      if (perKv && ns > 0) attentionGradFlush(pack);
    }
  }
}

/**
 * A query block's start: its rows' lse; δ = Σ grad ⊙ out (wrt q, k); dq accumulator 0 (wrt q); q (wrt k) or grad
 * (wrt v) packed as 8-dim panels, with a flag per row holding a NaN or ±∞; running max −∞ and sum 0 (lse).
 */
function startQueryBlock(p: GradBlockParams, w: i32): void {
  const i0 = p.i0, br = p.br, mode = p.mode, nd = p.nd, ndv = p.ndv;
  for (let r: i32 = 0; r < br; r++) {
    store<f32>(gLse + f4(r), mode == MODE_LSE ? 0 : load<f32>(at(p.lb, (i0 + r) * p.ls2)));
    store<f32>(gMax + f4(r), -Infinity);
    store<f32>(gSum + f4(r), 0);
  }
  if (mode == MODE_Q || mode == MODE_K) {
    for (let r: i32 = 0; r < br; r++) {
      const g = at(p.gb, (i0 + r) * p.gs2);
      const o = at(p.ob, (i0 + r) * p.os2);
      let delta: f64 = 0;
      for (let d: i32 = 0; d < ndv; d++) delta += <f64>load<f32>(g + f4(d)) * <f64>load<f32>(o + f4(d));
      store<f32>(gDelta + f4(r), <f32>delta);
    }
  }
  if (mode == MODE_Q) memory.fill(gDq, 0, f8(BQ * w));
  let anyBadRow: i32 = 0;
  if (mode == MODE_K || mode == MODE_V) {
    const src = mode == MODE_K ? p.qb : p.gb;
    const rs = mode == MODE_K ? p.qs2 : p.gs2;
    const n = mode == MODE_K ? nd : ndv;
    for (let dp: i32 = 0; dp < w; dp += 8) {
      let o = gPanel + f4(dp * BQ);
      for (let r: i32 = 0; r < br; r++) {
        const x = at(src, (i0 + r) * rs);
        for (let jj: i32 = 0; jj < 8; jj++, o += 4) store<f32>(o, dp + jj < n ? load<f32>(x + f4(dp + jj)) : 0);
      }
    }
    for (let r: i32 = 0; r < br; r++) if (nonFinite(at(src, (i0 + r) * rs), 1, n)) anyBadRow = 1;
  }
  store<i32>(gAnyBadRow, anyBadRow);
}
