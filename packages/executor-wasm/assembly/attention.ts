// attention: score → mask → softmax → dropout → weighted-sum fused, FlashAttention style. For each block of BQ query
// rows it streams over BK-key blocks with a running max and sum per row, so the [L, S] weights never exist; key
// blocks that causal or window masking hides from the whole query block are never visited. Q·Kᵀ and P·V run on the
// matmul's 4×8 tile (K and V packed into 8-wide panels once per kv head, shared by its query heads: GQA by index);
// exp is the 4-lane vector exp. Mask rule and dropout bits are the unfused kernels' own. A key weighed exactly 0
// (masked, dropped) adds nothing, not even a NaN or ±∞ of its value row (FlashAttention semantics): a key block
// holding such a value row takes a scalar P · V that skips zero weights instead of the tile (0 · NaN = NaN).
// The host drives it in two resumable pieces (src/kernels/attention.ts): `attentionPack` packs a range of keys of one kv
// head, `attentionBlock` runs some key blocks of one query block, keeping the running max, sum and output rows in the
// scratch between calls. A call may thus stop after any key block and the next one resumes it: the blocks, and so
// every sum, are those of an uninterrupted run. Nothing is kept anywhere but in the caller's scratch.
import { lastVisibleKey, lastWindowedKey } from "./mask";
import { micro, INIT_ACCUMULATE, INIT_ZERO } from "./matmul";
import { mixedBits } from "./dropout";
import { exp4, hmax, hsum, madd } from "./simd";
import { at } from "./strided";
import { exprFailed, exprRun, exprTileIn, exprTileOut, TILE_LD } from "./expr-program";

const BQ: i32 = 64;
const BK: i32 = 64;

@inline function f4(n: i32): usize {
  return <usize>n << 2;
}

// The two entry points take their numbers as one block in memory, written field by field by name on the host
// (src/kernels/attention-params.ts, in this declaration order, 4 bytes a field), like the WebGPU kernels' params
// uniform: 14 and 22 positional numbers, where a swapped pair gave silently wrong results, became named fields.
// A test (src/kernels/attention-params.test.ts) holds the host's table to these declarations, as compiled.

/** attentionPack's parameters (see there). */
@unmanaged export class PackParams {
  kb: usize; ks2: i32; ks3: i32;
  vb: usize; vs2: i32; vs3: i32;
  pb: usize; ps1: i32;
  ns: i32; nd: i32; ndv: i32;
  s0: i32; s1: i32;
  scratch: usize;
}

/** attentionBlock's parameters (see there); booleans are 0 or 1. */
@unmanaged export class BlockParams {
  qb: usize; qs2: i32; i0: i32; br: i32;
  ns: i32; nd: i32; ndv: i32;
  causal: i32; off: i32; win: i32; scale: f32;
  dropping: i32; mixedSeed: u32; threshold: u32; keptScale: f32;
  padded: i32; headRow: i32; anyBad: i32; fromBlock: i32; maxBlocks: i32;
  out: usize; scratch: usize;
  // A score or mask modification (expr-program.ts): the program (0: none), its registers and status (this call's
  // own), and the batch and head the block is of (what the expression sees as b and h).
  prog: usize; regs: usize; bi: i32; hi: i32;
  // Block sparsity of a mask modification (0: none): one byte per key block of each query block, 0 = hidden from
  // every row (skipped), found on the host; rows per (batch, head) pick: batch by `clsByB`, head by `clsH` > 1.
  classes: usize; clsQB: i32; clsBlk: i32; clsH: i32; clsByB: i32;
  // For blocks the mask keeps whole (class 2): the program without the mask (0: no program, the plain path).
  progAll: usize;
}

/**
 * `attentionRun`'s (and `attentionGradRun`'s) batch and head loop: the counts B, H, Hkv and L, and the batch and head
 * strides (float32 elements) of q, k, v, the padding mask, and the backward's grad, out and lse (0 for what a call
 * lacks). The row and column strides stay in PackParams and BlockParams. `attentionRun` runs batches [b0, b1) and kv
 * heads [g0, g1) of them (0, B, 0, Hkv for a whole call; a thread's share otherwise, its rows at the same places and
 * with the same dropout as in a whole call); `attentionGradRun` runs them all and does not read these four.
 */
@unmanaged export class RunParams {
  nb: i32; nh: i32; nhkv: i32; nl: i32;
  qs0: i32; qs1: i32;
  ks0: i32; ks1: i32;
  vs0: i32; vs1: i32;
  ps0: i32;
  gs0: i32; gs1: i32;
  os0: i32; os1: i32;
  ls0: i32; ls1: i32;
  b0: i32; b1: i32; g0: i32; g1: i32;
}

/** Bytes of the params `attentionRun` reads (a PackParams, a BlockParams and a RunParams block), for the host's check. */
export function attentionParamsBytes(): i32 {
  return <i32>(offsetof<PackParams>() + offsetof<BlockParams>() + offsetof<RunParams>());
}

/** Bytes of scratch `attentionPack` and `attentionBlock` need for key length S, head dim D and value dim Dv. */
export function attentionScratchBytes(ns: i32, nd: i32, ndv: i32): i32 {
  const nsP = (ns + 7) & ~7;
  const dvP = (ndv + 7) & ~7;
  return (nsP * nd + dvP * nsP + BQ * BK + BQ * dvP + 3 * BQ + 2 * nsP) * 4 + 64;
}

// The scratch, in order: Kᵀ panels (8 keys × D per panel), V panels (8 value dims × nsP keys per panel), one block of
// scores then of weights P [BQ, BK], the output rows being accumulated [BQ, dvP], row max, row sum, row alpha [BQ],
// padding flags (1 = padded key, for the current batch) and bad-value flags (1 = the value row holds a NaN or ±∞, for
// the current kv head), [nsP] each.
@inline function kPanels(scratch: usize): usize {
  return (scratch + 15) & ~15;
}
@inline function vPanels(scratch: usize, nsP: i32, nd: i32): usize {
  return kPanels(scratch) + f4(nsP * nd);
}
@inline function scoreBlock(scratch: usize, nsP: i32, nd: i32, dvP: i32): usize {
  return vPanels(scratch, nsP, nd) + f4(dvP * nsP);
}
@inline function hiddenFlags(scratch: usize, nsP: i32, nd: i32, dvP: i32): usize {
  return scoreBlock(scratch, nsP, nd, dvP) + f4(BQ * BK + BQ * dvP + 3 * BQ);
}

/**
 * Packs keys [s0, s1) of one kv head (s0 a multiple of 8; s1 a multiple of 8 or S): Kᵀ and V panels, the keys' padding
 * flags and bad-value flags. `kb`, `vb`: k[b, g, 0, 0] and v[b, g, 0, 0] (strides ks2, ks3 and vs2, vs3); `pb`:
 * pad[b, 0] (stride ps1), or 0 for none. Returns 1 when one of these value rows holds a NaN or ±∞, else 0.
 */
export function attentionPack(p: PackParams): i32 {
  const kb = p.kb, ks2 = p.ks2, ks3 = p.ks3, vb = p.vb, vs2 = p.vs2, vs3 = p.vs3, pb = p.pb, ps1 = p.ps1;
  const ns = p.ns, nd = p.nd, ndv = p.ndv, s0 = p.s0, s1 = p.s1, scratch = p.scratch;
  const nsP = (ns + 7) & ~7;
  const dvP = (ndv + 7) & ~7;
  const pEnd = s1 == ns ? nsP : s1; // the last panel is padded with zero keys
  const kp = kPanels(scratch);
  const vp = vPanels(scratch, nsP, nd);
  const hidden = hiddenFlags(scratch, nsP, nd, dvP);
  const badValue = hidden + f4(nsP);
  let o = kp + f4(s0 * nd);
  for (let p0 = s0; p0 < pEnd; p0 += 8) {
    for (let d: i32 = 0; d < nd; d++) {
      for (let jj: i32 = 0; jj < 8; jj++, o += 4) store<f32>(o, p0 + jj < ns ? load<f32>(at(kb, (p0 + jj) * ks2 + d * ks3)) : 0);
    }
  }
  for (let dp: i32 = 0; dp < dvP; dp += 8) {
    o = vp + f4(dp * nsP + s0 * 8);
    for (let s = s0; s < pEnd; s++) {
      for (let jj: i32 = 0; jj < 8; jj++, o += 4) store<f32>(o, s < ns && dp + jj < ndv ? load<f32>(at(vb, s * vs2 + (dp + jj) * vs3)) : 0);
    }
  }
  for (let j = s0; j < s1; j++) store<f32>(hidden + f4(j), pb != 0 && load<f32>(at(pb, j * ps1)) == 1 ? 1 : 0);
  let anyBad: i32 = 0;
  for (let s = s0; s < s1; s++) {
    let z: f32 = 0;
    for (let d: i32 = 0; d < ndv; d++) z += load<f32>(at(vb, s * vs2 + d * vs3)) * 0; // NaN exactly for NaN and ±∞
    store<f32>(badValue + f4(s), z == 0 ? 0 : 1);
    if (z != 0) anyBad = 1;
  }
  return anyBad;
}

/**
 * Runs up to `maxBlocks` key blocks of query block [i0, i0 + br) of one head, from its block number `fromBlock` on
 * (0 starts the query block: running max −∞, sums and output rows 0), on the keys `attentionPack` left in the scratch.
 * When the query block's last key block is done, its rows are normalised into `out` ([B, H, L, Dv] dense; its row
 * [b, h, 0] is `headRow`) and 0 is returned; else the number of key blocks still to run.
 * `qb`: q[b, h, 0, 0] with unit stride along D (row stride qs2). A row with every key hidden gives zeros; a NaN score
 * gives a NaN row; a key weighed exactly 0 adds nothing to a row, whatever its value row holds. `anyBad`: 1 when some
 * value row of the kv head holds a NaN or ±∞ (from `attentionPack`); `padded`: a padding mask was packed.
 */
export function attentionBlock(p: BlockParams): i32 {
  const qb = p.qb, qs2 = p.qs2, i0 = p.i0, br = p.br, ns = p.ns, nd = p.nd, ndv = p.ndv;
  const causal = p.causal != 0, off = p.off, win = p.win, scale = p.scale;
  const dropping = p.dropping != 0, mixedSeed = p.mixedSeed, threshold = p.threshold, keptScale = p.keptScale;
  const padded = p.padded != 0, headRow = p.headRow, anyBad = p.anyBad != 0, fromBlock = p.fromBlock, maxBlocks = p.maxBlocks;
  const out = p.out, scratch = p.scratch, prog = p.prog, regs = p.regs;
  const nsP = (ns + 7) & ~7;
  const dvP = (ndv + 7) & ~7;
  const kp = kPanels(scratch);
  const vp = vPanels(scratch, nsP, nd);
  const sb = scoreBlock(scratch, nsP, nd, dvP); // one block of scores, then of weights P: [BQ, BK]
  const ob = sb + f4(BQ * BK); // the output rows being accumulated: [BQ, dvP]
  const rowMax = ob + f4(BQ * dvP);
  const rowSum = rowMax + f4(BQ);
  const rowAlpha = rowSum + f4(BQ);
  const hidden = rowAlpha + f4(BQ);
  const badValue = hidden + f4(nsP);
  const ninf = f32x4.splat(-Infinity);
  const ldsB = f4(BK);
  const ldoB = f4(dvP);

  // Keys any row of this block may see by position: [first, end); key blocks start at `first` rounded down to a panel.
  const first = max(0, lastWindowedKey(i0, off, win) + 1);
  const end = min(ns, lastVisibleKey(i0 + br - 1, off, causal, ns) + 1);
  const blocks = end > (first & ~7) ? (end - (first & ~7) + BK - 1) / BK : 0;
  if (fromBlock == 0) {
    for (let r: i32 = 0; r < br; r++) {
      store<f32>(rowMax + f4(r), -Infinity);
      store<f32>(rowSum + f4(r), 0);
    }
    memory.fill(ob, 0, f4(BQ * dvP));
  }
  const stop = <i32>min(<i64>blocks, <i64>fromBlock + <i64>maxBlocks);
  const classes = p.classes;
  const clsRow = classes == 0 ? 0 : classes + <usize>((((p.clsByB != 0 ? p.bi : 0) * p.clsH + (p.clsH > 1 ? p.hi : 0)) * p.clsQB + i0 / BQ) * p.clsBlk);
  for (let blk = fromBlock; blk < stop; blk++) {
    // A key block the mask modification hides from every row of this query block adds nothing: skipped. One it
    // keeps whole runs the program without the mask (or none).
    const cls = classes != 0 ? load<u8>(clsRow + <usize>blk) : 1;
    if (cls == 0) continue;
    const tileProg = cls == 2 ? p.progAll : prog;
    const s0 = (first & ~7) + blk * BK;
    const bc = min(BK, end - s0);
    const bc4 = (bc + 3) & ~3;
    const bc8 = (bc + 7) & ~7;
    // Raw scores of the block: sb[r, c] = q[i0 + r] · k[s0 + c].
    for (let r: i32 = 0; r < br; r += 4) {
      const rows = min(4, br - r);
      const a0 = at(qb, (i0 + r) * qs2);
      const a1 = rows > 1 ? at(a0, qs2) : a0;
      const a2 = rows > 2 ? at(a1, qs2) : a0;
      const a3 = rows > 3 ? at(a2, qs2) : a0;
      for (let c: i32 = 0; c < bc8; c += 8) micro(nd, a0, a1, a2, a3, kp + f4((s0 + c) * nd), sb + f4(r * BK + c), ldsB, INIT_ZERO, 0);
    }
    if (tileProg != 0) {
      // The modification over the whole tile: sb becomes s' where kept, −∞ elsewhere (position and padding included),
      // so the rows below only take the max and the exponentials (scale 1). An index error stops the call.
      exprTileIn(regs, sb, br, i0, s0, bc, ns, causal, off, win, padded, hidden, scale);
      if (exprRun(tileProg, regs, br * TILE_LD, p.bi, p.hi, i0, s0) != 0) return 0;
      exprTileOut(tileProg, regs, sb, br);
    }
    for (let r: i32 = 0; r < br; r++) {
      const i = i0 + r;
      const row = sb + f4(r * BK);
      // This row's visible columns by position: [c0, c1).
      const c0 = max(0, lastWindowedKey(i, off, win) + 1 - s0);
      const c1 = min(bc, lastVisibleKey(i, off, causal, ns) + 1 - s0);
      if (c1 <= c0) {
        memory.fill(row, 0, f4(bc4));
        store<f32>(rowAlpha + f4(r), 1);
        continue;
      }
      if (tileProg == 0) {
        for (let c: i32 = 0; c < c0; c++) store<f32>(row + f4(c), -Infinity);
        for (let c = c1; c < bc4; c++) store<f32>(row + f4(c), -Infinity);
        if (padded) for (let c = c0; c < c1; c++) if (load<f32>(hidden + f4(s0 + c)) != 0) store<f32>(row + f4(c), -Infinity);
      }
      const mx = scaleRowMax(row, bc4, tileProg != 0 ? 1 : scale);
      if (mx == -Infinity) {
        memory.fill(row, 0, f4(bc4));
        store<f32>(rowAlpha + f4(r), 1);
        continue;
      }
      const mOld = load<f32>(rowMax + f4(r));
      const mNew = max(mOld, mx);
      const alpha = Mathf.exp(mOld - mNew); // 0 on the row's first visible block
      const vm = f32x4.splat(mNew);
      let vsum = f32x4.splat(0);
      for (let c: i32 = 0; c < bc4; c += 4) {
        const x = v128.load(row + f4(c));
        const p = v128.and(exp4(f32x4.sub(x, vm)), f32x4.ne(x, ninf));
        v128.store(row + f4(c), p);
        vsum = f32x4.add(vsum, p);
      }
      if (dropping) {
        // Index of weight [b, h, i, s0 + c] in [B, H, L, S], mod 2³² as the spec says.
        const base = <u32>(headRow + i) * <u32>ns + <u32>s0;
        for (let c = c0; c < c1; c++) if (mixedBits(mixedSeed, base + <u32>c) < threshold) store<f32>(row + f4(c), 0);
      }
      store<f32>(rowMax + f4(r), mNew);
      store<f32>(rowSum + f4(r), load<f32>(rowSum + f4(r)) * alpha + hsum(vsum));
      store<f32>(rowAlpha + f4(r), alpha);
    }
    // Rescale what came before, then ob += P · V of this block.
    for (let r: i32 = 0; r < br; r++) {
      const alpha = load<f32>(rowAlpha + f4(r));
      if (alpha != 1) {
        const va = f32x4.splat(alpha);
        const orow = ob + f4(r * dvP);
        for (let d: i32 = 0; d < dvP; d += 4) v128.store(orow + f4(d), f32x4.mul(v128.load(orow + f4(d)), va));
      }
    }
    let badBlock = false;
    // Every column the tile product reads (bc4, not bc): a column past `end` is hidden from the whole block, weight 0,
    // and 0 · NaN would still reach the sum.
    if (anyBad) for (let c: i32 = 0; c < bc4 && s0 + c < ns; c++) if (load<f32>(badValue + f4(s0 + c)) != 0) badBlock = true;
    if (!badBlock) {
      for (let r: i32 = 0; r < br; r += 4) {
        const rows = min(4, br - r);
        const a0 = sb + f4(r * BK);
        const a1 = rows > 1 ? a0 + ldsB : a0;
        const a2 = rows > 2 ? a1 + ldsB : a0;
        const a3 = rows > 3 ? a2 + ldsB : a0;
        for (let dp: i32 = 0; dp < dvP; dp += 8) micro(bc4, a0, a1, a2, a3, vp + f4(dp * nsP + s0 * 8), ob + f4(r * dvP + dp), ldoB, INIT_ACCUMULATE, 0);
      }
    } else {
      // The same sums over the keys with a weight ≠ 0 only; V panel element (s, d) at (d & ~7) · nsP + s · 8 + (d & 7).
      for (let r: i32 = 0; r < br; r++) {
        const prow = sb + f4(r * BK);
        const orow = ob + f4(r * dvP);
        for (let c: i32 = 0; c < bc; c++) {
          const p = load<f32>(prow + f4(c));
          if (p == 0) continue;
          for (let d: i32 = 0; d < ndv; d++) {
            const od = orow + f4(d);
            store<f32>(od, load<f32>(od) + p * load<f32>(vp + f4((d & ~7) * nsP + (s0 + c) * 8 + (d & 7))));
          }
        }
      }
    }
  }
  if (stop < blocks) return blocks - stop;
  // Normalise (and undo dropout's expected shrink); a row that saw no key has sum 0 and gives zeros.
  for (let r: i32 = 0; r < br; r++) {
    const sum = load<f32>(rowSum + f4(r));
    const inv: f32 = sum == 0 ? 0 : keptScale / sum;
    const orow = ob + f4(r * dvP);
    const y = out + f4((headRow + i0 + r) * ndv);
    for (let d: i32 = 0; d < ndv; d++) store<f32>(y + f4(d), load<f32>(orow + f4(d)) * inv);
  }
  return 0;
}

/**
 * A whole unchunked call in one go: for each batch b and kv head g, `attentionPack` over all its keys, then for each
 * query head h of its group and each query block, `attentionBlock` over all its key blocks: the very calls, in the
 * very order, that the host's steps make one by one (src/kernels/attention.ts), so the numbers are the same bit for
 * bit; only the per-head calls from the host are saved (microseconds each, more than a small head's work).
 * `pack` and `block` hold the call's fields with their per-head addresses (kb, vb, pb, qb) at b = 0, g = 0, h = 0 and
 * `maxBlocks` at least the key blocks of a query block; the loop rewrites the per-head and per-block fields in place.
 */
export function attentionRun(pack: PackParams, block: BlockParams, run: RunParams): void {
  const nb = run.nb, nh = run.nh, nhkv = run.nhkv, nl = run.nl;
  if (nhkv <= 0) return;
  const group = nh / nhkv;
  const qs0 = run.qs0, qs1 = run.qs1, ks0 = run.ks0, ks1 = run.ks1, vs0 = run.vs0, vs1 = run.vs1, ps0 = run.ps0;
  const kb = pack.kb, vb = pack.vb, pb = pack.pb, qb = block.qb, ns = pack.ns;
  pack.s0 = 0;
  pack.s1 = ns;
  block.fromBlock = 0;
  const b1 = min(run.b1, nb), g1 = min(run.g1, nhkv);
  for (let b: i32 = max(run.b0, 0); b < b1; b++) {
    for (let g: i32 = max(run.g0, 0); g < g1; g++) {
      pack.kb = at(kb, b * ks0 + g * ks1);
      pack.vb = at(vb, b * vs0 + g * vs1);
      pack.pb = pb == 0 ? 0 : at(pb, b * ps0);
      block.anyBad = ns > 0 ? attentionPack(pack) : 0;
      for (let h = g * group; h < (g + 1) * group; h++) {
        block.qb = at(qb, b * qs0 + h * qs1);
        block.headRow = (b * nh + h) * nl;
        block.bi = b;
        block.hi = h;
        for (let i0: i32 = 0; i0 < nl; i0 += BQ) {
          block.i0 = i0;
          block.br = min(BQ, nl - i0);
          attentionBlock(block);
          if (block.prog != 0 && exprFailed(block.regs)) return; // the host reports the index error
        }
      }
    }
  }
}

// ---- Decoding: a few query rows over K and V read where they are ----
//
// With one query row (a decoding step) or a handful, `attentionRun` spends its time packing every key and value of
// the cache into panels and scanning the values for NaN, then runs a 4-row tile with one real row. `attentionDecode`
// reads K and V in place instead (any batch, head and row stride, unit stride along D and Dv: the host checks, else
// takes attentionRun) and, per query row: its visible keys by position (the mask rule above: causal with offset
// `off`, window `win`), padding, scores by SIMD dot products, the row's max, weights exp(x − max) (a −∞ score,
// raw or masked, weighs exactly 0), their sum, and Σ weight · value row over the keys weighed ≠ 0 only (a key weighed
// exactly 0 adds nothing, not even a NaN or ±∞ of its value row, as in attentionBlock). A row with every key hidden
// gives zeros; a NaN score, or a +∞ one, gives a NaN row. No dropout (the host takes attentionRun when training drops).
// It reads the same three params blocks as `attentionRun` (the per-head fields at b = 0, g = 0, h = 0; `s0`, `s1`,
// `i0`, `br`, `fromBlock`, `maxBlocks`, `anyBad`, `dropping` and its numbers are not read) and, like it, runs batches
// [b0, b1) and kv heads [g0, g1) (a thread's share; each writes only its own heads' rows); `block.headRow` is the
// output row of [b = 0, h = 0, i = 0] (0 for a whole call; a chunked host calls it per kv head with run.nb = 1,
// run.nhkv = 1, run.nh = its group, and the addresses and headRow of that kv head's first query head).

/** Bytes of scratch `attentionDecode` needs for key length S: one row of scores, then weights. */
export function attentionDecodeScratchBytes(ns: i32): i32 {
  return (((ns + 3) & ~3) + 4) * 4 + 64;
}

/** q · k over nd elements (both unit stride). */
@inline function dot1(q: usize, k: usize, nd: i32): f32 {
  let a = f32x4.splat(0);
  let d: i32 = 0;
  for (; d + 4 <= nd; d += 4) a = madd(v128.load(q + f4(d)), v128.load(k + f4(d)), a);
  let s = hsum(a);
  for (; d < nd; d++) s += load<f32>(q + f4(d)) * load<f32>(k + f4(d));
  return s;
}

/**
 * One query row of `attentionDecode`: keys [first, end) of one kv head (k row j at kb + j·ks2, v row at vb + j·vs2
 * floats; pad flag of key j at pb + j·ps1 floats when `padded`), weights in `sc`, the normalised row into `y`.
 */
function decodeRow(
  q: usize, kb: usize, ks2: i32, vb: usize, vs2: i32, pb: usize, ps1: i32, padded: bool,
  first: i32, end: i32, nd: i32, ndv: i32, scale: f32, keptScale: f32, sc: usize, y: usize,
): void {
  const n = end - first;
  if (n <= 0) {
    memory.fill(y, 0, f4(ndv));
    return;
  }
  const n4 = (n + 3) & ~3;
  // Raw scores sc[c] = q · k[first + c], four keys at a time (q read once for the four).
  let c: i32 = 0;
  const ksB = f4(ks2);
  let k0 = at(kb, first * ks2);
  for (; c + 4 <= n; c += 4, k0 += ksB << 2) {
    const k1 = k0 + ksB, k2 = k1 + ksB, k3 = k2 + ksB;
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let d: i32 = 0;
    for (; d + 4 <= nd; d += 4) {
      const qv = v128.load(q + f4(d));
      const o = f4(d);
      a0 = madd(qv, v128.load(k0 + o), a0);
      a1 = madd(qv, v128.load(k1 + o), a1);
      a2 = madd(qv, v128.load(k2 + o), a2);
      a3 = madd(qv, v128.load(k3 + o), a3);
    }
    let s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
    for (; d < nd; d++) {
      const qd = load<f32>(q + f4(d));
      const o = f4(d);
      s0 += qd * load<f32>(k0 + o);
      s1 += qd * load<f32>(k1 + o);
      s2 += qd * load<f32>(k2 + o);
      s3 += qd * load<f32>(k3 + o);
    }
    store<f32>(sc + f4(c), s0);
    store<f32>(sc + f4(c + 1), s1);
    store<f32>(sc + f4(c + 2), s2);
    store<f32>(sc + f4(c + 3), s3);
  }
  for (; c < n; c++, k0 += ksB) store<f32>(sc + f4(c), dot1(q, k0, nd));
  for (; c < n4; c++) store<f32>(sc + f4(c), -Infinity);
  if (padded) for (c = 0; c < n; c++) if (load<f32>(at(pb, (first + c) * ps1)) == 1) store<f32>(sc + f4(c), -Infinity);
  const mx = scaleRowMax(sc, n4, scale);
  const ninf = f32x4.splat(-Infinity);
  if (mx == -Infinity) {
    memory.fill(y, 0, f4(ndv));
    return;
  }
  const vm = f32x4.splat(mx);
  let vsum = f32x4.splat(0);
  for (c = 0; c < n4; c += 4) {
    const x = v128.load(sc + f4(c));
    const p = v128.and(exp4(f32x4.sub(x, vm)), f32x4.ne(x, ninf));
    v128.store(sc + f4(c), p);
    vsum = f32x4.add(vsum, p);
  }
  const sum = hsum(vsum);
  const inv: f32 = sum == 0 ? 0 : keptScale / sum;
  const vinv = f32x4.splat(inv);
  // y = inv · Σ p[c] · v[first + c] over the keys with p ≠ 0: 32 value dims at a time in 8 accumulators, then 4, then 1.
  const vsB = f4(vs2);
  const v0 = at(vb, first * vs2);
  let d: i32 = 0;
  for (; d + 32 <= ndv; d += 32) {
    let o0 = f32x4.splat(0), o1 = f32x4.splat(0), o2 = f32x4.splat(0), o3 = f32x4.splat(0);
    let o4 = f32x4.splat(0), o5 = f32x4.splat(0), o6 = f32x4.splat(0), o7 = f32x4.splat(0);
    let vr = v0 + f4(d);
    for (c = 0; c < n; c++, vr += vsB) {
      const p = load<f32>(sc + f4(c));
      if (p == 0) continue;
      const pv = f32x4.splat(p);
      o0 = madd(pv, v128.load(vr), o0);
      o1 = madd(pv, v128.load(vr, 16), o1);
      o2 = madd(pv, v128.load(vr, 32), o2);
      o3 = madd(pv, v128.load(vr, 48), o3);
      o4 = madd(pv, v128.load(vr, 64), o4);
      o5 = madd(pv, v128.load(vr, 80), o5);
      o6 = madd(pv, v128.load(vr, 96), o6);
      o7 = madd(pv, v128.load(vr, 112), o7);
    }
    const yd = y + f4(d);
    v128.store(yd, f32x4.mul(o0, vinv));
    v128.store(yd, f32x4.mul(o1, vinv), 16);
    v128.store(yd, f32x4.mul(o2, vinv), 32);
    v128.store(yd, f32x4.mul(o3, vinv), 48);
    v128.store(yd, f32x4.mul(o4, vinv), 64);
    v128.store(yd, f32x4.mul(o5, vinv), 80);
    v128.store(yd, f32x4.mul(o6, vinv), 96);
    v128.store(yd, f32x4.mul(o7, vinv), 112);
  }
  for (; d + 4 <= ndv; d += 4) {
    let o0 = f32x4.splat(0);
    let vr = v0 + f4(d);
    for (c = 0; c < n; c++, vr += vsB) {
      const p = load<f32>(sc + f4(c));
      if (p != 0) o0 = madd(f32x4.splat(p), v128.load(vr), o0);
    }
    v128.store(y + f4(d), f32x4.mul(o0, vinv));
  }
  for (; d < ndv; d++) {
    let o: f32 = 0;
    let vr = v0 + f4(d);
    for (c = 0; c < n; c++, vr += vsB) {
      const p = load<f32>(sc + f4(c));
      if (p != 0) o += p * load<f32>(vr);
    }
    store<f32>(y + f4(d), o * inv);
  }
}

/**
 * A whole call with few query rows (see the section's head): for each batch b, kv head g, query head h of its group
 * and query row i, `decodeRow` over K and V in place. `block.scratch`: `attentionDecodeScratchBytes(S)` bytes.
 */
export function attentionDecode(pack: PackParams, block: BlockParams, run: RunParams): void {
  const nb = run.nb, nh = run.nh, nhkv = run.nhkv, nl = run.nl;
  if (nhkv <= 0) return;
  const group = nh / nhkv;
  const qs0 = run.qs0, qs1 = run.qs1, ks0 = run.ks0, ks1 = run.ks1, vs0 = run.vs0, vs1 = run.vs1, ps0 = run.ps0;
  const kb = pack.kb, ks2 = pack.ks2, vb = pack.vb, vs2 = pack.vs2, pb = pack.pb, ps1 = pack.ps1;
  const ns = pack.ns, nd = pack.nd, ndv = pack.ndv;
  const qb = block.qb, qs2 = block.qs2, causal = block.causal != 0, off = block.off, win = block.win;
  const scale = block.scale, keptScale = block.keptScale, padded = block.padded != 0 && pb != 0;
  const headRow0 = block.headRow, out = block.out;
  const sc = (block.scratch + 15) & ~15;
  const b1 = min(run.b1, nb), g1 = min(run.g1, nhkv);
  for (let b: i32 = max(run.b0, 0); b < b1; b++) {
    for (let g: i32 = max(run.g0, 0); g < g1; g++) {
      const kg = at(kb, b * ks0 + g * ks1);
      const vg = at(vb, b * vs0 + g * vs1);
      const pg = padded ? at(pb, b * ps0) : 0;
      for (let h = g * group; h < (g + 1) * group; h++) {
        const qh = at(qb, b * qs0 + h * qs1);
        const row = headRow0 + (b * nh + h) * nl;
        for (let i: i32 = 0; i < nl; i++) {
          const first = max(0, lastWindowedKey(i, off, win) + 1);
          const end = min(ns, lastVisibleKey(i, off, causal, ns) + 1);
          decodeRow(at(qh, i * qs2), kg, ks2, vg, vs2, pg, ps1, padded, first, end, nd, ndv, scale, keptScale, sc, out + f4((row + i) * ndv));
        }
      }
    }
  }
}

/**
 * Scales the n4 scores at `row` in place (a raw −∞ stays −∞, softmax's own "masked" marker) and returns their max;
 * shared by the packed and the decode path so both mask and scale a row the same way.
 */
@inline function scaleRowMax(row: usize, n4: i32, scale: f32): f32 {
  const ninf = f32x4.splat(-Infinity);
  const vscale = f32x4.splat(scale);
  let vmax = ninf;
  for (let c: i32 = 0; c < n4; c += 4) {
    const s = v128.load(row + f4(c));
    const x = v128.bitselect(f32x4.mul(s, vscale), ninf, f32x4.ne(s, ninf));
    v128.store(row + f4(c), x);
    vmax = f32x4.max(vmax, x);
  }
  return hmax(vmax);
}
