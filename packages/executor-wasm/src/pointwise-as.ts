// The built-in elementwise ops rendered as AssemblyScript at build time (scripts/build-wasm.mjs writes
// assembly/generated/pointwise.ts from here): each op declared by its expression (silu, relu, …) and each of its
// derived gradients becomes one SIMD loop, so a built-in pointwise op runs as fast as a kernel written by hand. Any
// other expression (a user's op) runs on the expression interpreter; both compute what the interpreter computes, lane
// by lane: float32 after every operation, exp / log / sigmoid / mod in float64 per lane, tanh by simd.ts's tanh4.
import { builtinOps, EXPR_OPS, pointwiseGrad, type Expr } from "@attngraph/graph";

/** One built-in expression: the export that runs it and the key it is found by. */
export interface BuiltinPointwise {
  readonly name: string;
  readonly expr: Expr;
}

/**
 * Every built-in op declared by its expression (attribute-free ones: the expression is the op's whatever its node), its
 * forward and each input's gradient, with the export name each is rendered under.
 */
export function builtinPointwise(): BuiltinPointwise[] {
  const out: BuiltinPointwise[] = [];
  for (const def of builtinOps) {
    if (!def.pointwise || Object.keys(def.attrs).length > 0) continue;
    const base = `pointwise_${def.kind.replace(/[^a-z0-9]/gi, "_")}`;
    const e = def.pointwise({});
    out.push({ name: base, expr: e });
    def.inputs.forEach((_, i) => {
      const g = pointwiseGrad(e, i);
      if (typeof g !== "string") out.push({ name: `${base}_grad${i}`, expr: g.expr });
    });
  }
  return out;
}

type Ty = "num" | "bool";

/**
 * AssemblyScript of `fn name(x0, x1, x2, x3, out, n)`: out[i] = e(x0[i], …) over n dense float32 elements, n a multiple
 * of 4 (the kernel runs the last n mod 4 on the interpreter). `out` may be x0's memory: a vector is read before written.
 */
export function renderPointwiseAs(e: Expr, name: string): string {
  const lines: string[] = [];
  const done = new Map<Expr, string>();
  let temps = 0;
  const literal = (x: number): string => {
    const f = Math.fround(x);
    return `f32x4.splat(${Object.is(f, -0) ? "-0.0" : Number.isInteger(f) ? `${f}.0` : String(f)})`;
  };
  const emit = (x: Expr): { v: string; t: Ty } => {
    if (typeof x === "number") return { v: literal(x), t: "num" };
    if (typeof x === "string") throw new Error(`renderPointwiseAs ${name}: variable ${x}`);
    const known = done.get(x);
    if (known !== undefined) return { v: known, t: typeOf(x) };
    let code: string;
    if (x.op === "input") {
      code = `v128.load(x${x.name.slice(1)} + o)`;
    } else {
      const args = x.args.map(emit);
      const [a, b, c] = args.map((y) => y.v);
      code = simd(x.op, a!, b!, c!);
    }
    const t = `t${temps++}`;
    lines.push(`    const ${t} = ${code};`);
    done.set(x, t);
    return { v: t, t: typeOf(x) };
  };
  const top = emit(e);
  return [
    `/** Generated from the expression ${JSON.stringify(e).slice(0, 160)} */`,
    `export function ${name}(x0: usize, x1: usize, x2: usize, x3: usize, out: usize, n: i32): void {`,
    `  for (let i: i32 = 0; i < n; i += 4) {`,
    `    const o = <usize>i << 2;`,
    ...lines,
    `    v128.store(out + o, ${top.v});`,
    `  }`,
    `}`,
  ].join("\n");
}

function simd(op: string, a: string, b: string, c: string): string {
  switch (op) {
    case "add":
      return `f32x4.add(${a}, ${b})`;
    case "sub":
      return `f32x4.sub(${a}, ${b})`;
    case "mul":
      return `f32x4.mul(${a}, ${b})`;
    case "div":
      return `f32x4.div(${a}, ${b})`;
    case "min":
      return `f32x4.min(${a}, ${b})`;
    case "max":
      return `f32x4.max(${a}, ${b})`;
    case "neg":
      return `f32x4.neg(${a})`;
    case "abs":
      return `f32x4.abs(${a})`;
    case "sqrt":
      return `f32x4.sqrt(${a})`;
    case "floor":
      return `f32x4.floor(${a})`;
    case "eq":
      return `f32x4.eq(${a}, ${b})`;
    case "ne":
      return `f32x4.ne(${a}, ${b})`;
    case "lt":
      return `f32x4.lt(${a}, ${b})`;
    case "le":
      return `f32x4.le(${a}, ${b})`;
    case "gt":
      return `f32x4.gt(${a}, ${b})`;
    case "ge":
      return `f32x4.ge(${a}, ${b})`;
    case "and":
      return `v128.and(${a}, ${b})`;
    case "or":
      return `v128.or(${a}, ${b})`;
    case "not":
      return `v128.not(${a})`;
    case "where":
      return `v128.bitselect(${b}, ${c}, ${a})`;
    case "tanh":
      return `tanh4(${a})`;
    case "exp":
      return `lanes4Exp(${a})`;
    case "log":
      return `lanes4Log(${a})`;
    case "sigmoid":
      return `lanes4Sigmoid(${a})`;
    case "mod":
      return `lanes4Mod(${a}, ${b})`;
    default:
      throw new Error(`renderPointwiseAs: no rendering for ${op} (known: ${Object.keys(EXPR_OPS).join(", ")})`);
  }
}

function typeOf(e: Expr): Ty {
  if (typeof e !== "object" || e.op === "input") return "num";
  return EXPR_OPS[e.op].type(e.args.map((a) => (typeOf(a) === "bool" ? "bool" : "num"))) === "bool" ? "bool" : "num";
}

/** The whole generated module: the lane helpers, then one function per built-in expression. */
export function renderBuiltinPointwiseModule(): string {
  return [
    "// GENERATED by packages/executor-wasm/scripts/build-wasm.mjs from src/pointwise-as.ts (the expressions of the",
    "// built-in elementwise ops of @attngraph/graph and their derived gradients). Do not edit; not committed.",
    'import { tanh4 } from "../simd";',
    "",
    LANE_HELPERS,
    ...builtinPointwise().map((p) => renderPointwiseAs(p.expr, p.name)),
    "",
  ].join("\n\n");
}

// Lane-wise float64 operations, as the interpreter's `scalar` computes them (assembly/expr-program.ts).
const LANE_HELPERS = [
  "@inline function lanes4(a: f32, b: f32, c: f32, d: f32): v128 {",
  "  return f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(a), 1, b), 2, c), 3, d);",
  "}",
  ...[
    ["Exp", "Math.exp(x)"],
    ["Log", "Math.log(x)"],
    ["Sigmoid", "1 / (1 + Math.exp(-x))"],
  ].map(([n, f]) =>
    [
      `@inline function f${n}(v: f32): f32 { const x = <f64>v; return <f32>(${f}); }`,
      `function lanes4${n}(a: v128): v128 {`,
      `  return lanes4(f${n}(f32x4.extract_lane(a, 0)), f${n}(f32x4.extract_lane(a, 1)), f${n}(f32x4.extract_lane(a, 2)), f${n}(f32x4.extract_lane(a, 3)));`,
      "}",
    ].join("\n"),
  ),
  "@inline function fMod(a: f32, b: f32): f32 { const x = <f64>a; const y = <f64>b; return <f32>(x - y * Math.floor(x / y)); }",
  "function lanes4Mod(a: v128, b: v128): v128 {",
  "  return lanes4(fMod(f32x4.extract_lane(a, 0), f32x4.extract_lane(b, 0)), fMod(f32x4.extract_lane(a, 1), f32x4.extract_lane(b, 1)), fMod(f32x4.extract_lane(a, 2), f32x4.extract_lane(b, 2)), fMod(f32x4.extract_lane(a, 3), f32x4.extract_lane(b, 3)));",
  "}",
].join("\n");
