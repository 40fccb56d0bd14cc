// Checking an expression before anything runs: every operation known, every arity and type right, every variable
// allowed where it stands (no `score` in a mask modification), every gathered input declared with one index per axis,
// every index an integer where that can be known. A GraphValidationError names the field and the sub-expression's path
// (`maskMod.args[1].index[0]`), says what was expected and what came.
import { GraphValidationError, show } from "../errors.js";
import { FLOAT32_MAX } from "../float32.js";
import { EXPR_OPS, EXPR_OP_NAMES } from "./ops.js";
import type { Expr, ExprOpName, ExprType } from "./types.js";

/** What an expression may use. */
export interface ExprScope {
  /** Names the error's subject starts with: `node flex: scoreMod`. */
  readonly subject: string;
  /**
   * "score": a score modification (may read `score`, evaluates to a number); "mask": true/false, no `score`;
   * "pointwise": a number from the elements of the inputs alone (no score, no positions): an elementwise op.
   */
  readonly role: "score" | "mask" | "pointwise";
  /** Gathered inputs by name, with their ranks (one index expression per axis). */
  readonly inputs: ReadonlyMap<string, number>;
}

/** Bounds on an expression's size: a modification is a few dozen nodes; these only stop a hostile one. */
const MAX_NODES = 10_000;
const MAX_DEPTH = 200;

export interface CheckedExpr {
  /** A copy of the expression (frozen), safe to keep whatever the caller does to its own. */
  readonly expr: Expr;
  readonly type: ExprType;
}

export function checkExpr(raw: unknown, scope: ExprScope): CheckedExpr {
  let nodes = 0;
  const fail = (path: string, what: string, expected: string, got: string): never => {
    throw new GraphValidationError(`${scope.subject}${path}`, what, expected, got);
  };
  const walk = (e: unknown, path: string, depth: number): { expr: Expr; type: ExprType } => {
    if (++nodes > MAX_NODES) fail(path, "expression too large", `at most ${MAX_NODES} nodes`, "more");
    if (depth > MAX_DEPTH) fail(path, "expression nested too deeply", `at most ${MAX_DEPTH} levels`, "more");
    if (typeof e === "number") {
      // Every executor computes in float32 (WGSL, wasm; cpu rounds each step): a literal is one, so 0.1 means the same
      // number everywhere, and 1e39 (infinite in float32) is refused rather than read differently per executor.
      if (!Number.isFinite(e) || Math.abs(e) > FLOAT32_MAX)
        fail(path, "invalid number", "a finite float32 number (|x| <= 3.4028234663852886e38)", show(e));
      const x = Math.fround(e);
      return { expr: x, type: Number.isInteger(x) ? "int" : "num" };
    }
    if (typeof e === "string") {
      if (scope.role === "pointwise")
        fail(path, "an elementwise expression reads no variables", "numbers and its inputs' elements", show(e));
      if (e === "score") {
        if (scope.role === "mask")
          fail(path, "a mask modification cannot read the score", "b, h, q, kv, numbers or gathered inputs", '"score"');
        return { expr: e, type: "num" };
      }
      if (e === "b" || e === "h" || e === "q" || e === "kv") return { expr: e, type: "int" };
      fail(path, "unknown variable", scope.role === "score" ? "score, b, h, q or kv" : "b, h, q or kv", show(e));
    }
    if (typeof e !== "object" || e === null || Array.isArray(e))
      fail(path, "invalid expression", "a number, a variable or { op, args }", show(e));
    const o = e as Record<string, unknown>;
    const op = o["op"];
    if (op === "input") return walkInput(o, path, depth);
    if (typeof op !== "string" || !Object.hasOwn(EXPR_OPS, op))
      fail(`${path}.op`, "unknown operation", `input or one of ${EXPR_OP_NAMES.join(", ")}`, show(op));
    const spec = EXPR_OPS[op as ExprOpName];
    const extra = Object.keys(o).find((k) => k !== "op" && k !== "args");
    if (extra !== undefined) fail(path, `unknown field of an ${show(op)} expression`, "op and args", show(extra));
    const args = o["args"];
    if (!Array.isArray(args)) fail(`${path}.args`, "missing arguments", `a list of ${spec.arity}`, show(args));
    const list = args as unknown[];
    if (list.length !== spec.arity)
      fail(
        `${path}.args`,
        `${op} takes ${spec.arity} argument${spec.arity === 1 ? "" : "s"}`,
        String(spec.arity),
        String(list.length),
      );
    const checked = list.map((a, i) => walk(a, `${path}.args[${i}]`, depth + 1));
    const type = spec.type(checked.map((c) => c.type));
    if (type !== "int" && type !== "num" && type !== "bool")
      return fail(
        path,
        `${op}: wrong argument types`,
        type,
        checked.map((c) => (c.type === "bool" ? "true/false" : "a number")).join(", "),
      );
    return { expr: Object.freeze({ op: op as ExprOpName, args: Object.freeze(checked.map((c) => c.expr)) }), type };
  };
  const walkInput = (o: Record<string, unknown>, path: string, depth: number): { expr: Expr; type: ExprType } => {
    const name = o["name"];
    const extra = Object.keys(o).find((k) => k !== "op" && k !== "name" && k !== "index");
    if (extra !== undefined) fail(path, "unknown field of an input expression", "op, name and index", show(extra));
    if (typeof name !== "string" || !scope.inputs.has(name)) {
      const known = [...scope.inputs.keys()];
      fail(
        `${path}.name`,
        "no gathered input of this name",
        known.length ? `one of ${known.join(", ")}` : "no gathered inputs are declared",
        show(name),
      );
    }
    const rank = scope.inputs.get(name as string)!;
    const index = o["index"];
    if (!Array.isArray(index) || index.length !== rank) {
      fail(
        `${path}.index`,
        `${name as string} has ${rank} axes: one index per axis`,
        `a list of ${rank}`,
        Array.isArray(index) ? `${index.length}` : show(index),
      );
    }
    const checked = (index as unknown[]).map((a, i) => {
      const c = walk(a, `${path}.index[${i}]`, depth + 1);
      // A gathered value may hold an integer (a document id): it is checked when read. Anything else known now is wrong.
      if (c.type === "bool")
        fail(`${path}.index[${i}]`, "an index must be an integer", "an integer expression", "true/false");
      if (c.type === "num" && !readsInput(c.expr))
        fail(
          `${path}.index[${i}]`,
          "an index must be an integer",
          "an integer expression (floor(...) of a number)",
          "a number",
        );
      return c.expr;
    });
    return {
      expr: Object.freeze({ op: "input" as const, name: name as string, index: Object.freeze(checked) }),
      type: "num",
    };
  };
  const top = walk(raw, "", 0);
  const want: ExprType[] = scope.role === "mask" ? ["bool"] : ["int", "num"]; // pointwise: a number, as a score-mod
  if (!want.includes(top.type)) {
    fail(
      "",
      scope.role === "mask"
        ? "a mask modification must be true/false"
        : `a ${scope.role === "score" ? "score modification" : "pointwise expression"} must be a number`,
      scope.role === "mask" ? "a comparison, and/or/not, or where of true/false values" : "a number",
      top.type === "bool" ? "true/false" : "a number",
    );
  }
  return top;
}

/** Whether `e` reads a gathered input anywhere (its value is then known only when it runs). */
function readsInput(e: Expr): boolean {
  if (typeof e !== "object") return false;
  if (e.op === "input") return true;
  return e.args.some(readsInput);
}

/** The names of the gathered inputs `e` reads. */
export function inputsRead(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (typeof e === "object") {
    if (e.op === "input") {
      out.add(e.name);
      e.index.forEach((i) => inputsRead(i, out));
    } else e.args.forEach((a) => inputsRead(a, out));
  }
  return out;
}

/** Checked expressions by the attribute object they came from (a plan step keeps one): checked once per scope. */
const checkedByAttr = new WeakMap<object, { readonly key: string; readonly expr: Expr }>();

/**
 * checkExpr for a kernel call's attribute `raw` (a kernel may be dispatched by hand, with any attributes), cached by
 * the attribute object and the gathered inputs' names and ranks: a plan step's expression is checked (and copied) once,
 * so the compiled code cached by the copy's identity (compileExpr) is reused on every run.
 */
export function checkExprCached(raw: unknown, scope: ExprScope): Expr {
  const key = `${scope.role}|${scope.subject}|${[...scope.inputs].map(([n, r]) => `${n}:${r}`).join(",")}`;
  const hit = typeof raw === "object" && raw !== null ? checkedByAttr.get(raw) : undefined;
  if (hit && hit.key === key) return hit.expr;
  const { expr } = checkExpr(raw, scope);
  if (typeof raw === "object" && raw !== null) checkedByAttr.set(raw, { key, expr });
  return expr;
}
