// An expression (a score or mask modification, @attngraph/graph's expr form) as WGSL functions, generated per
// expression: no kernel written by hand per variant. Numbers are f32 (positions are exact integers in f32 up to 2²⁴),
// comparisons and logic bool. `where` becomes a function with an `if`, so only the branch taken is evaluated (and its
// reads made), as on cpu; `and`/`or` short-circuit in WGSL. A gathered read clamps its indices to the input for memory
// safety only: that every read is in range is proved on the host (unprovedReads) or checked there before dispatch.
import { EXPR_OPS, type Expr, type ExprType } from "@attngraph/graph";

/** A gathered input as the program binds it: the storage name and the params word of its packed view. */
export interface WgslGathered {
  readonly name: string;
  readonly binding: string;
  readonly view: number;
}

/** The type of `e`: bool for comparisons and logic, f32 ("num") otherwise. */
function typeOf(e: Expr): ExprType {
  if (typeof e !== "object" || e.op === "input") return "num";
  const t = EXPR_OPS[e.op].type(e.args.map(typeOf));
  return t === "bool" ? "bool" : "num";
}

/** An f32 literal WGSL accepts (abstract float in parentheses: a negative one stays one operand). */
function literal(x: number): string {
  const s = Number.isInteger(x) && Math.abs(x) < 1e21 ? `${x}.0` : String(x);
  return s.startsWith("-") ? `(${s})` : s;
}

const CALL: Partial<Record<string, (a: string[]) => string>> = {
  add: ([a, b]) => `(${a} + ${b})`,
  sub: ([a, b]) => `(${a} - ${b})`,
  mul: ([a, b]) => `(${a} * ${b})`,
  div: ([a, b]) => `(${a} / ${b})`,
  min: ([a, b]) => `min(${a}, ${b})`,
  max: ([a, b]) => `max(${a}, ${b})`,
  // Python's mod (the divisor's sign), inline: operands have no side effects.
  mod: ([a, b]) => `(${a} - ${b} * floor(${a} / ${b}))`,
  eq: ([a, b]) => `(${a} == ${b})`,
  ne: ([a, b]) => `(${a} != ${b})`,
  lt: ([a, b]) => `(${a} < ${b})`,
  le: ([a, b]) => `(${a} <= ${b})`,
  gt: ([a, b]) => `(${a} > ${b})`,
  ge: ([a, b]) => `(${a} >= ${b})`,
  and: ([a, b]) => `(${a} && ${b})`,
  or: ([a, b]) => `(${a} || ${b})`,
  not: ([a]) => `(!${a})`,
  neg: ([a]) => `(-${a})`,
  abs: ([a]) => `abs(${a})`,
  exp: ([a]) => `exp(${a})`,
  log: ([a]) => `log(${a})`,
  // tanh of a large |x| is ±1; some implementations compute it as a ratio of exponentials that overflows to NaN.
  tanh: ([a]) => `tanh(clamp(${a}, -20.0, 20.0))`,
  sqrt: ([a]) => `sqrt(${a})`,
  floor: ([a]) => `floor(${a})`,
  sigmoid: ([a]) => `(1.0 / (1.0 + exp(-${a})))`,
};

const ARGS = "score: f32, b: f32, h: f32, q: f32, kv: f32";
const PASS = "score, b, h, q, kv";

/**
 * WGSL defining `fn <name>(score, b, h, q, kv) -> f32` (or `-> bool` for a mask) for `e`, with its helpers. The
 * gathered inputs' storage bindings and views are the program's (`gathered`, by the names the expression uses).
 */
export function exprWgsl(e: Expr, name: string, gathered: readonly WgslGathered[]): string {
  const helpers: string[] = [];
  const byName = new Map(gathered.map((g) => [g.name, g]));
  const readers = new Map<string, string>();
  const reader = (input: string, rank: number): string => {
    const g = byName.get(input)!;
    let fn = readers.get(input);
    if (fn) return fn;
    fn = `${name}_read_${readers.size}`;
    readers.set(input, fn);
    const params = Array.from({ length: rank }, (_, a) => `i${a}: f32`).join(", ");
    const at = Array.from({ length: rank }, (_, a) => ` + u32(clamp(i${a}, 0.0, f32(view_dim(${g.view}u, ${a}u)) - 1.0)) * view_stride(${g.view}u, ${a}u)`).join("");
    helpers.push(`fn ${fn}(${params}) -> f32 { return ${g.binding}[view_offset(${g.view}u)${at}]; }`);
    return fn;
  };
  const gen = (x: Expr): string => {
    if (typeof x === "number") return literal(x);
    if (typeof x === "string") return x;
    if (x.op === "input") return `${reader(x.name, x.index.length)}(${x.index.map(gen).join(", ")})`;
    if (x.op === "where") {
      const fn = `${name}_where_${helpers.length}`;
      helpers.push(""); // reserve the name's slot before the branches add theirs
      const slot = helpers.length - 1;
      const type = typeOf(x) === "bool" ? "bool" : "f32";
      const [c, a, b] = x.args.map(gen) as [string, string, string];
      helpers[slot] = `fn ${fn}(${ARGS}) -> ${type} { if (${c}) { return ${a}; } return ${b}; }`;
      return `${fn}(${PASS})`;
    }
    const spell = CALL[x.op];
    if (!spell) throw new Error(`webgpu: no WGSL for expression op ${x.op}`); // the table above covers EXPR_OPS
    return spell(x.args.map(gen));
  };
  const body = gen(e);
  const type = typeOf(e) === "bool" ? "bool" : "f32";
  return [
    ...helpers,
    `fn ${name}(${ARGS}) -> ${type} { return ${body}; }`,
  ].join("\n");
}
