// The derivative of a score modification, as another expression: with respect to the score (the fused backward needs
// d score' / d score at every element it sees) and with respect to one gathered read (a learnable input, such as a
// bias table or per-head temperatures, gets d score' / d read at every place it was read). Indices are integers and
// carry no gradient; comparisons, floor and the choice of a `where` branch are piecewise constant.
import { EXPR_OPS } from "./ops.js";
import { isInput, type Expr, type ExprCall, type ExprInput } from "./types.js";

/** What to differentiate by: the score, or one read (by identity: a node of the expression). */
export type Wrt = { readonly kind: "score" } | { readonly kind: "read"; readonly read: ExprInput };

const call = (op: ExprCall["op"], ...args: Expr[]): Expr => {
  // Constant folding: a derivative is mostly zeros and ones.
  if (args.every((a) => typeof a === "number")) {
    const v = (EXPR_OPS[op].value as (...a: number[]) => number | boolean)(...(args as number[]));
    if (typeof v === "number" && Number.isFinite(v)) return v;
  }
  return { op, args };
};
const add = (a: Expr, b: Expr): Expr => (a === 0 ? b : b === 0 ? a : call("add", a, b));
const sub = (a: Expr, b: Expr): Expr => (b === 0 ? a : a === 0 ? neg(b) : call("sub", a, b));
const mul = (a: Expr, b: Expr): Expr => (a === 0 || b === 0 ? 0 : a === 1 ? b : b === 1 ? a : call("mul", a, b));
const div = (a: Expr, b: Expr): Expr => (a === 0 ? 0 : b === 1 ? a : call("div", a, b));
const neg = (a: Expr): Expr => (a === 0 ? 0 : call("neg", a));
const where = (c: Expr, a: Expr, b: Expr): Expr => (a === 0 && b === 0 ? 0 : call("where", c, a, b));

/** d e / d wrt, as an expression over the same variables and reads (0 where e does not depend on it). */
export function derive(e: Expr, wrt: Wrt): Expr {
  if (typeof e === "number") return 0;
  if (typeof e === "string") return e === "score" && wrt.kind === "score" ? 1 : 0;
  if (isInput(e)) return wrt.kind === "read" && wrt.read === e ? 1 : 0;
  const [a, b, c] = e.args as [Expr, Expr, Expr];
  const d = (x: Expr) => derive(x, wrt);
  switch (e.op) {
    case "add":
      return add(d(a), d(b));
    case "sub":
      return sub(d(a), d(b));
    case "mul":
      return add(mul(d(a), b), mul(a, d(b)));
    case "div":
      // (a / b)' = a' / b − a · b' / b²
      return sub(div(d(a), b), div(mul(a, d(b)), mul(b, b)));
    case "min":
    case "max": {
      // w · a' + (1 − w) · b', w = 1 where a is the one taken, 0 where b is, ½ on a tie (torch.minimum/maximum split
      // ties in halves). Each argument's derivative appears once: nesting min/max does not double the expression.
      const [da, db] = [d(a), d(b)];
      if (da === 0 && db === 0) return 0;
      const first = e.op === "min" ? "lt" : "gt";
      const second = e.op === "min" ? "gt" : "lt";
      const w: Expr = {
        op: "where",
        args: [call(first, a, b), 1, { op: "where", args: [call(second, a, b), 0, 0.5] }],
      };
      return add(mul(w, da), mul(sub(1, w), db));
    }
    case "mod":
      // a − b · floor(a / b): d = a' − floor(a / b) · b'
      return sub(d(a), mul(call("floor", call("div", a, b)), d(b)));
    case "neg":
      return neg(d(a));
    case "abs": {
      // sign(a) · a', with sign(0) = 0 as torch.abs's gradient; a' appears once.
      const da = d(a);
      return da === 0
        ? 0
        : mul({ op: "where", args: [call("gt", a, 0), 1, { op: "where", args: [call("lt", a, 0), -1, 0] }] }, da);
    }
    case "exp":
      return mul(e, d(a));
    case "log":
      return div(d(a), a);
    case "tanh": {
      const da = d(a);
      return da === 0 ? 0 : mul(sub(1, mul(e, e)), da);
    }
    case "sqrt":
      return div(d(a), mul(2, e));
    case "sigmoid": {
      const da = d(a);
      return da === 0 ? 0 : mul(mul(e, sub(1, e)), da);
    }
    case "where":
      return where(a, d(b), d(c));
    default:
      // floor, comparisons and logic: piecewise constant (or true/false), no gradient.
      return 0;
  }
}

/**
 * The number of nodes `e` has written out as a tree (shared subtrees counted each time, as code generation and the
 * checks walk it), up to `limit` + 1: a derivative's size before anything compiles it.
 */
export function treeSize(e: Expr, limit: number): number {
  const memo = new Map<object, number>();
  const size = (x: Expr): number => {
    if (typeof x !== "object") return 1;
    const known = memo.get(x);
    if (known !== undefined) return known;
    let n = 1;
    for (const c of x.op === "input" ? x.index : x.args) {
      n += size(c);
      if (n > limit) break;
    }
    n = Math.min(n, limit + 1);
    memo.set(x, n);
    return n;
  };
  return size(e);
}
