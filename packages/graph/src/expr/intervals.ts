// Interval arithmetic over expressions: bounds of a number-valued sub-expression and whether a true/false one can be
// true or false, for given ranges of the position variables. One evaluator for two questions: whether every gathered
// read stays inside its input (bounds.ts: index proofs, reads unbounded) and which blocks a mask modification hides or
// keeps whole (block-class.ts: a read bounded by its input's min and max over the box its indices span). Sound, not
// tight: whatever cannot be bounded is unbounded (a NaN in an input, a huge box, mod by a variable).
import type { GatheredTensor } from "./compile.js";
import { isInput, type Expr, type ExprInput } from "./types.js";

export type Interval = readonly [number, number];
export const ANY: Interval = [-Infinity, Infinity];

/** Inclusive ranges of the position variables. */
export interface VarRanges {
  readonly b: Interval;
  readonly h: Interval;
  readonly q: Interval;
  readonly kv: Interval;
}

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

export class Intervals {
  constructor(
    private readonly r: VarRanges,
    /** Inputs whose values bound a read; a read of any other is unbounded. */
    private readonly gathered: ReadonlyMap<string, GatheredTensor> = new Map(),
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
        // Python's mod by a positive constant c lies in [0, c − 1] for an integer dividend and c, else in [0, c] (a
        // float dividend may round up to c). A non-finite dividend gives NaN: unbounded.
        if (!(y[0] === y[1] && y[0] > 0) || !Number.isFinite(x[0]) || !Number.isFinite(x[1])) return ANY;
        return [0, isIntegral(e.args[0]!) && Number.isInteger(y[0]) ? y[0] - 1 : y[0]];
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
        if (Number.isNaN(v)) return false;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        return true;
      }
      for (let i = box[axis]![0]; i <= box[axis]![1]; i++)
        if (!walk(axis + 1, offset + i * t.strides[axis]!)) return false;
      return true;
    };
    return walk(0, t.offset) ? [lo, hi] : ANY;
  }
}

/** Whether `e` is integer-valued by construction (positions, integer literals, integer arithmetic, floor). */
export function isIntegral(e: Expr): boolean {
  if (typeof e === "number") return Number.isInteger(e);
  if (typeof e === "string") return e !== "score";
  if (e.op === "input" || e.op === "div") return false;
  if (["add", "sub", "mul", "min", "max", "mod", "neg", "abs"].includes(e.op)) return e.args.every(isIntegral);
  if (e.op === "floor") return true;
  if (e.op === "where") return isIntegral(e.args[1]!) && isIntegral(e.args[2]!);
  return false;
}
