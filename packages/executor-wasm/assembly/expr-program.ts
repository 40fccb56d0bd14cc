// Score and mask modifications inside the fused attention's streaming loops: the host compiles a checked expression
// (src/kernels/expr-program.ts) into a small program of vector instructions over tile-sized registers, and the
// kernels (attention.ts, attention-grad.ts) run it once per [BQ, BK] score tile right after the tile's raw scores.
// One interpreter for every expression: no kernel per variant, and the decoding of an instruction is paid once per
// tile (4096 lanes), not per element.
//
// Registers hold one tile each, lane e = r · TILE_LD + c for row r, column c of the tile: float32 lanes ("num"),
// int32 lanes ("int", exact integer arithmetic) or int32 masks (all ones = true). Register 0 is the scaled score
// (float32), register 1 the lanes the kernel itself shows (position, padding): every gathered read is predicated on
// it, or on a narrower mask inside `where`, `and` and `or`, so that only the reads the reference evaluates are made.
// A gathered read checks every index against its axis: the first index out of range (or not an integer) is recorded
// in the status words at `regs` (sub-expression site, axis, value, element) and reads nothing; the host turns it into
// an ExprIndexError. Nothing here can trap: integer mod by a variable is never emitted (the host computes it as the
// reference does, in float64 per lane), float→int conversions are not emitted at all.
//
// Program (i32 words): [0] instruction count, [1] register count, [2] register of s' (float32), [3] register of the
// keep mask (−1: keep every shown lane), [4] register of ∂s'/∂score (float32, −1: none), [5] word offset of the first
// instruction; then INSTR_WORDS words per instruction: op, dst, a, b, c, d. A gathered input's descriptor (at word
// offset `a` of a GATHER): byte address, rank, 1 for int32 data, then shape[rank] and strides[rank] (elements); the
// index list (at word offset `c`, the read's site number in `d`): per axis a register and 1 when it holds float32 (a gathered value used as an index).

import { lastVisibleKey, lastWindowedKey } from "./mask";
import { tanh4 } from "./simd";

/** Lanes per tile row (the kernels' BK) and per register (BQ · BK). */
export const TILE_LD: i32 = 64;
export const TILE_LANES: i32 = 64 * 64;
/** Bytes of the status words before the registers. */
const STATUS_BYTES: usize = 64;
const INSTR_WORDS: i32 = 6;
/** An op word's opcode; its flags: a uniform instruction (one vector), whose result is then copied across the tile. */
const OP_MASK: i32 = 0xff;
const UNIFORM_FLAG: i32 = 0x100;
const SPLAT_FLAG: i32 = 0x200;

// Opcodes: the host's table (src/kernels/expr-program.ts, OP) must match.
const CONST: i32 = 0;
const VAR_Q: i32 = 1;
const VAR_KV: i32 = 2;
const VAR_B: i32 = 3;
const VAR_H: i32 = 4;
const I2F: i32 = 5;
const FADD: i32 = 10;
const FSUB: i32 = 11;
const FMUL: i32 = 12;
const FDIV: i32 = 13;
const FMIN: i32 = 14;
const FMAX: i32 = 15;
const FMOD: i32 = 16;
const IADD: i32 = 20;
const ISUB: i32 = 21;
const IMUL: i32 = 22;
const IMIN: i32 = 23;
const IMAX: i32 = 24;
const IMOD: i32 = 25;
const FNEG: i32 = 30;
const FABS: i32 = 31;
const FEXP: i32 = 32;
const FLOG: i32 = 33;
const FTANH: i32 = 34;
const FSQRT: i32 = 35;
const FSIGMOID: i32 = 36;
const FFLOOR: i32 = 37;
const INEG: i32 = 40;
const IABS: i32 = 41;
const FEQ: i32 = 50;
const FNE: i32 = 51;
const FLT: i32 = 52;
const FLE: i32 = 53;
const FGT: i32 = 54;
const FGE: i32 = 55;
const IEQ: i32 = 60;
const INE: i32 = 61;
const ILT: i32 = 62;
const ILE: i32 = 63;
const IGT: i32 = 64;
const IGE: i32 = 65;
const AND: i32 = 70;
const OR: i32 = 71;
const NOT: i32 = 72;
const SELECT: i32 = 73;
const GATHER: i32 = 80;
/** A gathered read whose indices are the same in every lane (slopes[h]): made once per tile, then broadcast. */
const GATHER_UNIFORM: i32 = 81;
const GATHER_ROW: i32 = 82;

@inline function word(prog: usize, i: i32): i32 {
  return load<i32>(prog + (<usize>i << 2));
}

/** Address of register k. */
@inline export function exprReg(regs: usize, k: i32): usize {
  return regs + STATUS_BYTES + <usize>k * <usize>(TILE_LANES << 2);
}

/** Bytes of a register area for `nRegs` registers (the status words included). */
export function exprRegsBytes(nRegs: i32): i32 {
  return <i32>STATUS_BYTES + nRegs * (TILE_LANES << 2);
}

/** Clears the status words (before a call). */
export function exprClearStatus(regs: usize): void {
  memory.fill(regs, 0, STATUS_BYTES);
}

/** Whether an index error was recorded. */
@inline export function exprFailed(regs: usize): bool {
  return load<i32>(regs) != 0;
}

/** Records the first bad index: site, axis, value, element [b, h, q, kv]. */
function fail(regs: usize, site: i32, axis: i32, value: f64, b: i32, h: i32, q: i32, kv: i32): void {
  if (load<i32>(regs) != 0) return;
  store<i32>(regs, 1);
  store<i32>(regs, site, 4);
  store<i32>(regs, axis, 8);
  store<f64>(regs, value, 16);
  store<i32>(regs, b, 24);
  store<i32>(regs, h, 28);
  store<i32>(regs, q, 32);
  store<i32>(regs, kv, 36);
}

/**
 * The kernel's inputs to the program for rows [0, br) of a tile whose raw scores are at `sb` (row stride TILE_LD),
 * query rows from i0, keys from s0 (bc of them in the tile): register 0 = scale · raw (every lane; a lane not shown
 * holds whatever, nothing is read through it), register 1 = the lanes shown: the keys each row sees by position (the
 * kernels' own mask rule: causal with offset `off`, window `win`) that are not padded (`hidden` flags of keys,
 * float32 1 = padded, when `padded`).
 */
export function exprTileIn(regs: usize, sb: usize, br: i32, i0: i32, s0: i32, bc: i32, ns: i32, causal: bool, off: i32, win: i32, padded: bool, hidden: usize, scale: f32): void {
  const score = exprReg(regs, 0);
  const shown = exprReg(regs, 1);
  const vscale = f32x4.splat(scale);
  const iota = i32x4(0, 1, 2, 3);
  for (let r: i32 = 0; r < br; r++) {
    const i = i0 + r;
    const vlo = i32x4.splat(max(0, lastWindowedKey(i, off, win) + 1 - s0));
    const vhi = i32x4.splat(min(bc, lastVisibleKey(i, off, causal, ns) + 1 - s0));
    const e0 = <usize>(r * TILE_LD) << 2;
    for (let c: i32 = 0; c < TILE_LD; c += 4) {
      const o = e0 + (<usize>c << 2);
      v128.store(score + o, f32x4.mul(v128.load(sb + o), vscale));
      const cv = i32x4.add(i32x4.splat(c), iota);
      let m = v128.and(i32x4.ge_s(cv, vlo), i32x4.lt_s(cv, vhi));
      // Flags past the tile's last key are read but never matter: those lanes are not shown (c ≥ c1).
      if (padded) m = v128.andnot(m, f32x4.ne(v128.load(hidden + (<usize>(s0 + c) << 2)), f32x4.splat(0)));
      v128.store(shown + o, m);
    }
  }
}

/**
 * Writes the program's result over the tile at `sb` (rows [0, br), all TILE_LD columns): s' where the lane is shown
 * and kept, −∞ (hidden) elsewhere.
 */
export function exprTileOut(prog: usize, regs: usize, sb: usize, br: i32): void {
  const s = exprReg(regs, word(prog, 2));
  const k = word(prog, 3);
  const shown = exprReg(regs, 1);
  const keep = k < 0 ? shown : exprReg(regs, k);
  const ninf = f32x4.splat(-Infinity);
  const n = <usize>(br * TILE_LD) << 2;
  for (let o: usize = 0; o < n; o += 16) {
    const m = v128.and(v128.load(shown + o), v128.load(keep + o));
    v128.store(sb + o, v128.bitselect(v128.load(s + o), ninf, m));
  }
}

/** The register holding ∂s'/∂score (float32), or 0 when the program has none (∂s'/∂score = 1). */
export function exprDerivative(prog: usize, regs: usize): usize {
  const d = word(prog, 4);
  return d < 0 ? 0 : exprReg(regs, d);
}

/**
 * Runs the program over lanes [0, n) of the registers (n a multiple of 4) for the tile of batch b, head h, query rows
 * from i0 and keys from s0. Returns 1 when an index error was recorded (now or before), else 0.
 */
export function exprRun(prog: usize, regs: usize, n: i32, b: i32, h: i32, i0: i32, s0: i32): i32 {
  const count = word(prog, 0);
  let pc = word(prog, 5);
  const bytes = <usize>n << 2;
  for (let k: i32 = 0; k < count; k++, pc += INSTR_WORDS) {
    const opWord = word(prog, pc);
    const op = opWord & OP_MASK;
    const d = exprReg(regs, word(prog, pc + 1));
    if ((opWord & UNIFORM_FLAG) != 0) {
      // The same value in every lane of the tile (literals, b, h and what only they make): computed on one vector,
      // then copied across the tile only where a per-lane instruction or the kernel reads it.
      step(prog, regs, op, d, pc, 4, b, h, i0, s0);
      if ((opWord & SPLAT_FLAG) != 0) {
        const v = v128.load(d);
        for (let o: usize = 16; o < bytes; o += 16) v128.store(d + o, v);
      }
      continue;
    }
    step(prog, regs, op, d, pc, n, b, h, i0, s0);
  }
  return load<i32>(regs) != 0 ? 1 : 0;
}

/** One instruction (`op`, destination register `d`) over lanes [0, n). */
function step(prog: usize, regs: usize, op: i32, d: usize, pc: i32, n: i32, b: i32, h: i32, i0: i32, s0: i32): void {
  const bytes = <usize>n << 2;
  const wa = word(prog, pc + 2);
  const wb = word(prog, pc + 3);
  const wc = word(prog, pc + 4);
  if (op == GATHER) {
    gather(prog, regs, d, wa, wb, wc, word(prog, pc + 5), 0, n, b, h, i0, s0);
    return;
  }
  if (op == GATHER_ROW) {
    gatherRows(prog, regs, d, wa, wb, wc, word(prog, pc + 5), n, b, h, i0, s0);
    return;
  }
  if (op == GATHER_UNIFORM) {
    // The read is made (and checked) once, at the first lane that makes it; none: nothing is read.
    const p = exprReg(regs, wb);
    let e: i32 = 0;
    while (e < n && !v128.any_true(v128.load(p + (<usize>e << 2)))) e += 4;
    while (e < n && load<i32>(p + (<usize>e << 2)) == 0) e++;
    if (e >= n) {
      memory.fill(d, 0, bytes);
      return;
    }
    gather(prog, regs, d, wa, wb, wc, word(prog, pc + 5), e, e + 1, b, h, i0, s0);
    const v = v128.load32_splat(d + (<usize>e << 2));
    for (let o: usize = 0; o < bytes; o += 16) v128.store(d + o, v);
    return;
  }
  if (op < I2F) {
    fill(op, d, wa, n, b, h, i0, s0);
    return;
  }
  const a = exprReg(regs, wa);
  const bb = exprReg(regs, wb);
  if (op == FTANH) {
    for (let o: usize = 0; o < bytes; o += 16) v128.store(d + o, tanh4(v128.load(a + o)));
    return;
  }
  if (op == FMOD || op == IMOD || (op >= FEXP && op <= FSIGMOID && op != FSQRT)) {
    scalar(op, d, a, bb, n);
    return;
  }
  if (op == SELECT) {
    const cc = exprReg(regs, wc);
    for (let o: usize = 0; o < bytes; o += 16) v128.store(d + o, v128.bitselect(v128.load(bb + o), v128.load(cc + o), v128.load(a + o)));
    return;
  }
  for (let o: usize = 0; o < bytes; o += 16) {
    const x = v128.load(a + o);
    const y = v128.load(bb + o); // unary ops read a register they ignore
    let z: v128;
    switch (op) {
      case I2F: z = f32x4.convert_i32x4_s(x); break;
      case FADD: z = f32x4.add(x, y); break;
      case FSUB: z = f32x4.sub(x, y); break;
      case FMUL: z = f32x4.mul(x, y); break;
      case FDIV: z = f32x4.div(x, y); break;
      // IEEE minimum/maximum: NaN if either is, −0 below +0 (JavaScript's Math.min/max).
      case FMIN: z = f32x4.min(x, y); break;
      case FMAX: z = f32x4.max(x, y); break;
      case IADD: z = i32x4.add(x, y); break;
      case ISUB: z = i32x4.sub(x, y); break;
      case IMUL: z = i32x4.mul(x, y); break;
      case IMIN: z = i32x4.min_s(x, y); break;
      case IMAX: z = i32x4.max_s(x, y); break;
      case FNEG: z = f32x4.neg(x); break;
      case FABS: z = f32x4.abs(x); break;
      case FSQRT: z = f32x4.sqrt(x); break;
      case FFLOOR: z = f32x4.floor(x); break;
      case INEG: z = i32x4.neg(x); break;
      case IABS: z = i32x4.abs(x); break;
      case FEQ: z = f32x4.eq(x, y); break;
      case FNE: z = f32x4.ne(x, y); break;
      case FLT: z = f32x4.lt(x, y); break;
      case FLE: z = f32x4.le(x, y); break;
      case FGT: z = f32x4.gt(x, y); break;
      case FGE: z = f32x4.ge(x, y); break;
      case IEQ: z = i32x4.eq(x, y); break;
      case INE: z = i32x4.ne(x, y); break;
      case ILT: z = i32x4.lt_s(x, y); break;
      case ILE: z = i32x4.le_s(x, y); break;
      case IGT: z = i32x4.gt_s(x, y); break;
      case IGE: z = i32x4.ge_s(x, y); break;
      case AND: z = v128.and(x, y); break;
      case OR: z = v128.or(x, y); break;
      case NOT: z = v128.not(x); break;
      default: z = x; // unknown opcodes are refused by the host's table test; never reached
    }
    v128.store(d + o, z);
  }
}

/** Constants and position variables. */
function fill(op: i32, d: usize, imm: i32, n: i32, b: i32, h: i32, i0: i32, s0: i32): void {
  const bytes = <usize>n << 2;
  if (op == VAR_KV) {
    // kv = s0 + column: the same 16 vectors on every row.
    const iota = i32x4(0, 1, 2, 3);
    for (let c: i32 = 0; c < TILE_LD; c += 4) v128.store(d + (<usize>c << 2), i32x4.add(i32x4.splat(s0 + c), iota));
    for (let o: usize = <usize>TILE_LD << 2; o < bytes; o += <usize>TILE_LD << 2) memory.copy(d + o, d, <usize>TILE_LD << 2);
    return;
  }
  if (op == VAR_Q) {
    for (let r: i32 = 0; r * TILE_LD < n; r++) {
      const v = i32x4.splat(i0 + r);
      const row = d + (<usize>(r * TILE_LD) << 2);
      for (let c: i32 = 0; c < TILE_LD; c += 4) v128.store(row + (<usize>c << 2), v);
    }
    return;
  }
  const v = i32x4.splat(op == CONST ? imm : op == VAR_B ? b : h);
  for (let o: usize = 0; o < bytes; o += 16) v128.store(d + o, v);
}

/**
 * The lane-wise operations computed in float64 one lane at a time, as the reference (JavaScript doubles rounded to
 * float32 after each operation) computes them: exp, log, sigmoid and Python's mod of numbers (tanh runs on four lanes
 * at once, simd.ts's tanh4: within a few float32 ulp); and the exact
 * integer mod (the host emits it only for a non-zero literal divisor; a 0 would give 0 here, never a trap).
 */
function scalar(op: i32, d: usize, a: usize, b: usize, n: i32): void {
  const bytes = <usize>n << 2;
  if (op == IMOD) {
    for (let o: usize = 0; o < bytes; o += 4) {
      const x = load<i32>(a + o);
      const y = load<i32>(b + o);
      let r: i32 = y == 0 || y == -1 ? 0 : x % y;
      if (r != 0 && (r ^ y) < 0) r += y; // Python's sign: the divisor's
      store<i32>(d + o, r);
    }
    return;
  }
  for (let o: usize = 0; o < bytes; o += 4) {
    const x = <f64>load<f32>(a + o);
    let z: f64;
    switch (op) {
      case FMOD: {
        const y = <f64>load<f32>(b + o);
        z = x - y * Math.floor(x / y);
        break;
      }
      case FEXP: z = Math.exp(x); break;
      case FLOG: z = Math.log(x); break;
      default: z = 1 / (1 + Math.exp(-x)); // FSIGMOID
    }
    store<f32>(d + o, <f32>z);
  }
}

/**
 * A read whose last index is kv and whose others are the same along a tile's row (mask[q, kv], bias[h, q, kv]): per
 * row, when every lane of the row reads and the row's keys and other indices are in range, one contiguous run of the
 * input (a copy when its last axis is dense float32); any other row takes the per-lane path (checks and errors as
 * there). `n` lanes = whole rows of TILE_LD.
 */
function gatherRows(prog: usize, regs: usize, d: usize, desc: i32, pred: i32, list: i32, site: i32, n: i32, b: i32, h: i32, i0: i32, s0: i32): void {
  const base = <usize>word(prog, desc);
  const rank = word(prog, desc + 1);
  const isInt = word(prog, desc + 2) != 0;
  const p = exprReg(regs, pred);
  const last = rank - 1;
  const lastSize = word(prog, desc + 3 + last);
  const lastStride = word(prog, desc + 3 + rank + last);
  for (let e: i32 = 0; e < n; e += TILE_LD) {
    const row = <usize>e << 2;
    let all = true;
    for (let c: usize = 0; c < <usize>TILE_LD << 2; c += 16) if (!i32x4.all_true(v128.load(p + row + c))) { all = false; break; }
    let off: i32 = 0;
    if (all && s0 + TILE_LD <= lastSize) {
      for (let a: i32 = 0; a < last; a++) {
        const i = load<i32>(exprReg(regs, word(prog, list + 2 * a)) + row);
        if (<u32>i >= <u32>word(prog, desc + 3 + a)) { all = false; break; }
        off += i * word(prog, desc + 3 + rank + a);
      }
    } else all = false;
    if (!all) {
      gather(prog, regs, d, desc, pred, list, site, e, e + TILE_LD, b, h, i0, s0);
      continue;
    }
    const at = base + (<usize>(off + s0 * lastStride) << 2);
    if (!isInt && lastStride == 1) {
      memory.copy(d + row, at, <usize>TILE_LD << 2);
      continue;
    }
    for (let c: i32 = 0; c < TILE_LD; c++) {
      const src = at + (<usize>(c * lastStride) << 2);
      store<f32>(d + row + (<usize>c << 2), isInt ? <f32>load<i32>(src) : load<f32>(src));
    }
  }
}

/**
 * A gathered read at every lane in [e0, n) of `pred` (an int32 mask register): the descriptor at word `desc`, the index list at
 * word `list`; 0 in lanes not read. `site` numbers the read for the host's message.
 */
function gather(prog: usize, regs: usize, d: usize, desc: i32, pred: i32, list: i32, site: i32, e0: i32, n: i32, b: i32, h: i32, i0: i32, s0: i32): void {
  const base = <usize>word(prog, desc);
  const rank = word(prog, desc + 1);
  const isInt = word(prog, desc + 2) != 0;
  const p = exprReg(regs, pred);
  for (let e: i32 = e0; e < n; e++) {
    const o = <usize>e << 2;
    if (load<i32>(p + o) == 0) {
      store<i32>(d + o, 0);
      continue;
    }
    let off: i32 = 0;
    let ok = true;
    for (let a: i32 = 0; a < rank; a++) {
      const size = word(prog, desc + 3 + a);
      const r = exprReg(regs, word(prog, list + 2 * a)) + o;
      let i: i32;
      if (word(prog, list + 2 * a + 1) != 0) {
        // A float32 index (a gathered value): a non-negative integer below the size, else the error (NaN fails too).
        const x = load<f32>(r);
        if (!(x >= 0 && x < <f32>size && Mathf.floor(x) == x)) {
          fail(regs, site, a, <f64>x, b, h, i0 + e / TILE_LD, s0 + e % TILE_LD);
          ok = false;
          break;
        }
        i = <i32>x;
      } else {
        i = load<i32>(r);
        if (<u32>i >= <u32>size) {
          fail(regs, site, a, <f64>i, b, h, i0 + e / TILE_LD, s0 + e % TILE_LD);
          ok = false;
          break;
        }
      }
      off += i * word(prog, desc + 3 + rank + a);
    }
    if (!ok) {
      store<i32>(d + o, 0);
      continue;
    }
    const at = base + (<usize>off << 2);
    store<f32>(d + o, isInt ? <f32>load<i32>(at) : load<f32>(at));
  }
}

/**
 * An elementwise expression (the pointwise kernel) over `n` elements: the float32 input in word k of `inputs` (a dense
 * array's byte address; 0 for one the program does not read) is loaded into register 2 + k a tile at a time, the
 * program runs, and its result register is stored to `out` (dense; it may be input 0's memory: a tile is loaded before
 * it is stored). Lanes past `n` in the last tile compute on whatever the registers hold and are never stored.
 */
export function exprPointwise(prog: usize, regs: usize, inputs: usize, out: usize, n: i32): void {
  const result = exprReg(regs, word(prog, 2));
  memory.fill(exprReg(regs, 1), 0xff, <usize>TILE_LANES << 2); // every lane shown
  for (let e0: i32 = 0; e0 < n; e0 += TILE_LANES) {
    const len = min(TILE_LANES, n - e0);
    for (let k: i32 = 0; k < 4; k++) {
      const a = <usize>load<u32>(inputs + (<usize>k << 2));
      if (a != 0) memory.copy(exprReg(regs, 2 + k), a + (<usize>e0 << 2), <usize>len << 2);
    }
    exprRun(prog, regs, (len + 3) & ~3, 0, 0, 0, 0);
    memory.copy(out + (<usize>e0 << 2), result, <usize>len << 2);
  }
}
