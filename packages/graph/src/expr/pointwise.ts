// Elementwise ops as expressions: the same expression form as the attention modifications, over the elements of an
// op's inputs (a read with no index is "this element of that input"). An op declared this way (definePointwiseOp) gets
// its gradient by derive() and runs on every executor through one "pointwise" kernel that evaluates the expression:
// no kernel is written per op, per direction or per executor.
import { checkExpr, type ExprScope } from "./check.js";
import { EXPR_OPS, pyMod, sigmoid } from "./ops.js";
import { derive } from "./derive.js";
import { isInput, type Expr, type ExprInput, type ExprType } from "./types.js";

/** The generic pointwise op's input slots: an expression lowered to a "pointwise" step reads these names. */
export const POINTWISE_SLOTS = ["x0", "x1", "x2", "x3"] as const;

/** A read of the current element of input `name`. */
export function elementOf(name: string): ExprInput {
  return { op: "input", name, index: [] };
}

/** What an elementwise expression may read: the elements of `names` (each a rank-0 read), numbers, no variables. */
export function pointwiseScope(subject: string, names: readonly string[]): ExprScope {
  return { subject, role: "pointwise", inputs: new Map(names.map((n) => [n, 0])) };
}

/**
 * `raw` checked as an elementwise expression over `names`, with every read of one name made the same object: derive()
 * differentiates by a read's identity, so one object per input gives the total derivative with respect to it.
 */
export function checkPointwise(raw: unknown, subject: string, names: readonly string[]): Expr {
  const { expr } = checkExpr(raw, pointwiseScope(subject, names));
  // Structurally equal sub-expressions become one object (checkExpr copies a shared subtree once per use): a derived
  // gradient repeats the forward's sigmoid or tanh, and every renderer computes a shared node once.
  const nodes = new Map<string, Expr>();
  const keys = new Map<Expr, string>();
  const keyOf = (e: Expr): string =>
    typeof e === "object" ? keys.get(e)! : typeof e === "number" ? (Object.is(e, -0) ? "-0" : String(e)) : e;
  const walk = (e: Expr): Expr => {
    if (typeof e !== "object") return e;
    const args = isInput(e) ? [] : e.args.map(walk);
    const key = isInput(e) ? `@${e.name}` : `${e.op}(${args.map(keyOf).join(",")})`;
    const known = nodes.get(key);
    if (known !== undefined) return known;
    const made: Expr = isInput(e)
      ? Object.freeze(elementOf(e.name))
      : Object.freeze({ op: e.op, args: Object.freeze(args) });
    nodes.set(key, made);
    keys.set(made, key);
    return made;
  };
  return walk(expr);
}

/** The names of the inputs `e` reads, in first-read order. */
export function elementsRead(e: Expr): string[] {
  const out: string[] = [];
  const walk = (x: Expr): void => {
    if (typeof x !== "object") return;
    if (isInput(x)) {
      if (!out.includes(x.name)) out.push(x.name);
    } else x.args.forEach(walk);
  };
  walk(e);
  return out;
}

/**
 * The vector-Jacobian product of `e` (checked by checkPointwise) for input `wrt`: `grad · ∂e/∂wrt`, as an expression
 * reading `grad` and the inputs `e` reads. `grad` must not be one of e's input names.
 */
export function pointwiseVjpExpr(e: Expr, wrt: string, grad: string): Expr {
  const read = findRead(e, wrt);
  return times(elementOf(grad), read === undefined ? 0 : derive(e, { kind: "read", read }));
}

/**
 * g · d with the product moved into `where` branches: where(c, g · a, g · b), as PyTorch's backward of a select
 * (torch.where, relu's threshold_backward) picks the gradient rather than multiplying by 0 or 1, so an infinite or NaN
 * gradient in the branch not taken gives 0, not NaN.
 */
function times(g: Expr, d: Expr): Expr {
  if (d === 0) return 0;
  if (d === 1) return g;
  if (typeof d === "object" && d.op === "where")
    return { op: "where", args: [d.args[0]!, times(g, d.args[1]!), times(g, d.args[2]!)] };
  return { op: "mul", args: [g, d] };
}

function findRead(e: Expr, name: string): ExprInput | undefined {
  if (typeof e !== "object") return undefined;
  if (isInput(e)) return e.name === name ? e : undefined;
  for (const a of e.args) {
    const r = findRead(a, name);
    if (r) return r;
  }
  return undefined;
}

/** The compiled expression: the value from the elements of its inputs, in the order of the names it was compiled for. */
export type PointwiseFn = (v0: number, v1: number, v2: number, v3: number) => number;

const compiled = new WeakMap<object, Map<string, PointwiseFn>>();

/**
 * `e` (checked by checkPointwise) as a JavaScript function of the elements of `names` (at most four). Every operation
 * is rounded to float32, as the wasm and WGSL renderings compute; with `float64`, nothing is (references). Generated
 * source, or closures where the page forbids generated code; cached by the expression object.
 */
export function compilePointwise(
  e: Expr,
  names: readonly string[],
  options: { readonly float64?: boolean } = {},
): PointwiseFn {
  const key = `${options.float64 ? "64" : "32"}|${names.join(",")}`;
  const byKey = typeof e === "object" ? compiled.get(e) : undefined;
  const hit = byKey?.get(key);
  if (hit) return hit;
  const round = options.float64 ? (x: number) => x : Math.fround;
  let fn: PointwiseFn;
  try {
    fn = pointwiseSource(e, names)(pyMod, sigmoid, round);
  } catch (err) {
    if (!(err instanceof EvalError)) throw err;
    fn = pointwiseClosures(e, names, round); // generated code forbidden here (CSP)
  }
  if (typeof e === "object") (compiled.get(e) ?? compiled.set(e, new Map()).get(e)!).set(key, fn);
  return fn;
}

function pointwiseSource(e: Expr, names: readonly string[]): (...a: unknown[]) => PointwiseFn {
  const js = (x: Expr): string => {
    if (typeof x === "number") return `(${Object.is(x, -0) ? "-0" : String(x)})`;
    if (typeof x === "string") throw new Error(`pointwise: variable ${x}`); // checkPointwise refuses variables
    if (isInput(x)) return `v${names.indexOf(x.name)}`;
    const code = EXPR_OPS[x.op].js(x.args.map(js));
    return typeOf(x) === "bool" ? code : `f(${code})`;
  };
  return new Function(
    "pyMod",
    "sigmoid",
    "f",
    `"use strict"; return function (v0, v1, v2, v3) { return ${js(e)}; };`,
  ) as (...a: unknown[]) => PointwiseFn;
}

function pointwiseClosures(e: Expr, names: readonly string[], round: (x: number) => number): PointwiseFn {
  type Node = (v: readonly number[]) => number | boolean;
  const build = (x: Expr): Node => {
    if (typeof x === "number") return () => x;
    if (typeof x === "string") throw new Error(`pointwise: variable ${x}`);
    if (isInput(x)) {
      const k = names.indexOf(x.name);
      return (v) => v[k]!;
    }
    const args = x.args.map(build);
    if (x.op === "where") return (v) => (args[0]!(v) ? args[1]! : args[2]!)(v);
    if (x.op === "and") return (v) => Boolean(args[0]!(v)) && Boolean(args[1]!(v));
    if (x.op === "or") return (v) => Boolean(args[0]!(v)) || Boolean(args[1]!(v));
    const op = EXPR_OPS[x.op].value as (...a: unknown[]) => number | boolean;
    return (v) => {
      const r = op(...args.map((a) => a(v)));
      return typeof r === "number" ? round(r) : r;
    };
  };
  const top = build(e);
  return (v0, v1, v2, v3) => top([v0, v1, v2, v3]) as number;
}

/** A sub-expression's type for code generation: bool for comparisons and logic, a number otherwise. */
function typeOf(e: Expr): ExprType {
  if (typeof e !== "object" || isInput(e)) return "num";
  const t = EXPR_OPS[e.op].type(e.args.map(typeOf));
  return t === "bool" ? "bool" : "num";
}

const keys = new WeakMap<object, string>();
/**
 * A checked expression's key for caches of what executors compile from it (a shader, a rendered loop): its JSON,
 * written once per expression object.
 */
export function exprKey(e: Expr): string {
  if (typeof e !== "object") return JSON.stringify(e);
  let k = keys.get(e);
  if (k === undefined) keys.set(e, (k = JSON.stringify(e)));
  return k;
}
