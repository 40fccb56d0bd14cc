// Block sparsity from a mask modification (FlexAttention's BlockMask, found without a pass over every element): for a
// block of queries × keys (and one batch and head, or all of them), whether the mask hides every pair ("none"), keeps
// every pair ("all") or may do either ("some"), by interval arithmetic over the block's ranges of b, h, q and kv. A
// gathered read takes the min and max of its input over the box its index intervals span (document ids of a block's
// queries), so a document mask skips the blocks that pair two documents. Conservative: whatever cannot be bounded
// (a NaN in an input, a huge box, mod by a variable) is "some", and the kernel evaluates that block per element.
import type { GatheredTensor } from "./compile.js";
import { isInput, type Expr, type ExprInput } from "./types.js";

type Interval = readonly [number, number];
const ANY: Interval = [-Infinity, Infinity];

/** Inclusive ranges of the position variables over a block. */
export interface BlockRanges {
  readonly b: Interval;
  readonly h: Interval;
  readonly q: Interval;
  readonly kv: Interval;
}

/** 0: every pair hidden; 1: some may be seen; 2: every pair seen. */
export type BlockClass = 0 | 1 | 2;
export const BLOCK_NONE: BlockClass = 0;
export const BLOCK_SOME: BlockClass = 1;
export const BLOCK_ALL: BlockClass = 2;

/** The most elements one gathered read may scan for its bounds (a box past this is unbounded). */
const MAX_BOX = 1 << 14;
/** Float32 results are rounded; bounds computed in float64 are widened by this relative amount (and exact integers). */
const WIDEN = 2 ** -20;

function widen([lo, hi]: Interval): Interval {
  const exact = (v: number) => Number.isInteger(v) && Math.abs(v) <= 2 ** 24;
  return [exact(lo) ? lo : lo - Math.abs(lo) * WIDEN - 1e-38, exact(hi) ? hi : hi + Math.abs(hi) * WIDEN + 1e-38];
}

/** Bounds of a monotonic non-decreasing function over an interval. */
function mono(f: (x: number) => number, [lo, hi]: Interval): Interval {
  const a = f(lo);
  const b = f(hi);
  return Number.isNaN(a) || Number.isNaN(b) ? ANY : widen([a, b]);
}

class Evaluator {
  constructor(
    private readonly r: BlockRanges,
    private readonly gathered: ReadonlyMap<string, GatheredTensor>,
  ) {}

  num(e: Expr): Interval {
    if (typeof e === "number") return [e, e];
    if (typeof e === "string") return e === "b" || e === "h" || e === "q" || e === "kv" ? this.r[e] : ANY;
    if (isInput(e)) return this.read(e);
    if (e.op === "where") {
      const [canFalse, canTrue] = this.bool(e.args[0]!);
      const t = canTrue ? this.num(e.args[1]!) : undefined;
      const f = canFalse ? this.num(e.args[2]!) : undefined;
      if (t && f) return [Math.min(t[0], f[0]), Math.max(t[1], f[1])];
      return t ?? f ?? ANY;
    }
    const [x, y] = e.args.map((a) => this.num(a)) as [Interval, Interval];
    switch (e.op) {
      case "add":
        return widen([x[0] + y[0], x[1] + y[1]]);
      case "sub":
        return widen([x[0] - y[1], x[1] - y[0]]);
      case "mul": {
        const p = [x[0] * y[0], x[0] * y[1], x[1] * y[0], x[1] * y[1]];
        return p.some(Number.isNaN) ? ANY : widen([Math.min(...p), Math.max(...p)]);
      }
      case "div": {
        if (y[0] <= 0 && y[1] >= 0) return ANY;
        const p = [x[0] / y[0], x[0] / y[1], x[1] / y[0], x[1] / y[1]];
        return p.some(Number.isNaN) ? ANY : widen([Math.min(...p), Math.max(...p)]);
      }
      case "min":
        return [Math.min(x[0], y[0]), Math.min(x[1], y[1])];
      case "max":
        return [Math.max(x[0], y[0]), Math.max(x[1], y[1])];
      case "neg":
        return [-x[1], -x[0]];
      case "abs":
        return x[0] >= 0 ? x : x[1] <= 0 ? [-x[1], -x[0]] : [0, Math.max(-x[0], x[1])];
      case "floor":
        return [Math.floor(x[0]), Math.floor(x[1])];
      case "mod":
        // Python's mod by a positive constant c lies in [0, c] (closed: a float dividend may round up to c).
        return y[0] === y[1] && y[0] > 0 && Number.isFinite(x[0]) && Number.isFinite(x[1]) ? [0, y[0]] : ANY;
      case "exp":
        return mono(Math.exp, x);
      case "log":
        return x[0] < 0 ? ANY : mono(Math.log, x);
      case "sqrt":
        return x[0] < 0 ? ANY : mono(Math.sqrt, x);
      case "tanh":
        return mono(Math.tanh, x);
      case "sigmoid":
        return mono((v) => 1 / (1 + Math.exp(-v)), x);
      default:
        return ANY;
    }
  }

  /** [can be false, can be true]. */
  bool(e: Expr): readonly [boolean, boolean] {
    if (typeof e !== "object" || isInput(e)) return [true, true];
    const both = [true, true] as const;
    switch (e.op) {
      case "not": {
        const [f, t] = this.bool(e.args[0]!);
        return [t, f];
      }
      case "and": {
        const [af, at] = this.bool(e.args[0]!);
        if (!at) return [true, false];
        const [bf, bt] = this.bool(e.args[1]!);
        return [af || bf, at && bt];
      }
      case "or": {
        const [af, at] = this.bool(e.args[0]!);
        if (!af) return [false, true];
        const [bf, bt] = this.bool(e.args[1]!);
        return [af && bf, at || bt];
      }
      case "where": {
        const [cf, ct] = this.bool(e.args[0]!);
        const t = ct ? this.bool(e.args[1]!) : undefined;
        const f = cf ? this.bool(e.args[2]!) : undefined;
        if (t && f) return [t[0] || f[0], t[1] || f[1]];
        return t ?? f ?? both;
      }
      case "eq":
      case "ne":
      case "lt":
      case "le":
      case "gt":
      case "ge": {
        const x = this.num(e.args[0]!);
        const y = this.num(e.args[1]!);
        if (![...x, ...y].every((v) => !Number.isNaN(v))) return both;
        let r: readonly [boolean, boolean];
        if (e.op === "eq" || e.op === "ne") {
          const canEq = x[0] <= y[1] && y[0] <= x[1];
          const canNe = !(x[0] === x[1] && y[0] === y[1] && x[0] === y[0]);
          r = e.op === "eq" ? [canNe, canEq] : [canEq, canNe];
        } else {
          // a < b, a <= b; gt and ge swap the sides.
          const [a, b] = e.op === "lt" || e.op === "le" ? [x, y] : [y, x];
          const strict = e.op === "lt" || e.op === "gt";
          const canTrue = strict ? a[0] < b[1] : a[0] <= b[1];
          const canFalse = strict ? a[1] >= b[0] : a[1] > b[0];
          r = [canFalse, canTrue];
        }
        return r;
      }
      default:
        return both;
    }
  }

  /** A gathered read: the min and max of the input over its indices' box (bounded, NaN-free), else unbounded. */
  private read(e: ExprInput): Interval {
    const t = this.gathered.get(e.name);
    if (t === undefined) return ANY;
    const box = e.index.map((i, a) => {
      const [lo, hi] = this.num(i);
      return [Math.max(0, Math.ceil(lo)), Math.min(t.shape[a]! - 1, Math.floor(hi))] as const;
    });
    if (box.some(([lo, hi]) => !(lo <= hi))) return ANY; // out of range everywhere: the kernel's read reports it
    if (box.reduce((n, [lo, hi]) => n * (hi - lo + 1), 1) > MAX_BOX) return ANY;
    let lo = Infinity;
    let hi = -Infinity;
    const walk = (axis: number, offset: number): boolean => {
      if (axis === box.length) {
        const v = t.data[offset]!;
        if (v !== v) return false;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        return true;
      }
      for (let i = box[axis]![0]; i <= box[axis]![1]; i++) if (!walk(axis + 1, offset + i * t.strides[axis]!)) return false;
      return true;
    };
    return walk(0, t.offset) ? [lo, hi] : ANY;
  }
}

/** The class of a block for mask modification `keep` (checked), its gathered inputs bound. */
export function classifyBlock(keep: Expr, ranges: BlockRanges, gathered: ReadonlyMap<string, GatheredTensor>): BlockClass {
  const [canFalse, canTrue] = new Evaluator(ranges, gathered).bool(keep);
  return !canTrue ? BLOCK_NONE : canFalse ? BLOCK_SOME : BLOCK_ALL;
}

/** Which position variables an expression reads (a block's class depends on no other). */
export function varsRead(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (typeof e === "string") out.add(e);
  else if (typeof e === "object") for (const a of isInput(e) ? e.index : e.args) varsRead(a, out);
  return out;
}

/**
 * The classes of a mask modification's blocks for one kernel call, each found once: a block's class depends only on
 * the variables the expression reads (a document mask reads b, q, kv: its classes are shared by every head).
 */
export class BlockClasses {
  readonly #keep: Expr;
  readonly #gathered: ReadonlyMap<string, GatheredTensor>;
  readonly #byB: boolean;
  readonly #byH: boolean;
  /** Whether a class depends on the batch (the expression reads b) or on the head (reads h). */
  get readsB(): boolean {
    return this.#byB;
  }
  get readsH(): boolean {
    return this.#byH;
  }
  readonly #memo = new Map<string, BlockClass>();

  constructor(keep: Expr, gathered: ReadonlyMap<string, GatheredTensor>) {
    this.#keep = keep;
    this.#gathered = gathered;
    const vars = varsRead(keep);
    this.#byB = vars.has("b");
    this.#byH = vars.has("h");
  }

  /** The class of queries [q0, q1) × keys [kv0, kv1) of batch b, head h. */
  of(b: number, h: number, q0: number, q1: number, kv0: number, kv1: number): BlockClass {
    const key = `${this.#byB ? b : 0},${this.#byH ? h : 0},${q0},${q1},${kv0},${kv1}`;
    let c = this.#memo.get(key);
    if (c === undefined) {
      c = classifyBlock(this.#keep, { b: [b, b], h: [h, h], q: [q0, q1 - 1], kv: [kv0, kv1 - 1] }, this.#gathered);
      this.#memo.set(key, c);
    }
    return c;
  }
}
