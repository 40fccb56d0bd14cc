// An expression (a score or mask modification, @attngraph/graph's expr form) as a WGSL function, generated per
// expression: no kernel written by hand per variant. The body is one `let` per operation (no nesting, so no depth
// limit of the WGSL parser applies). Numbers are f32, as cpu and wasm round them; an operation on two integers that
// f32 division would not give exactly (mod, floor of a quotient) is computed in i32. `where`, `and` and `or` become
// `if` blocks, so only the branch taken is evaluated (and its reads made), as on cpu. A gathered read clamps its
// indices for memory safety only: that every read is in range is proved on the host (unprovedReads) or checked there.
import { EXPR_OPS, type Expr, type ExprType } from "@attngraph/graph";
import { UnsupportedError } from "@attngraph/tensor";
import type { GpuTensor } from "../gpu-tensor.js";
import { PARAM_WORDS, type Params } from "./shared.wgsl.js";

/** A gathered input as the program binds it: the storage name and the params word of its packed view. */
export interface WgslGathered {
  readonly name: string;
  readonly binding: string;
  readonly view: number;
}

/**
 * Packs the views of the gathered inputs a program binds (in order, storage names `<prefix>0`, `<prefix>1`, …) into
 * `p`, after the program's own words. A view takes 2 + 2 · rank words: too many for the params uniform is an
 * UnsupportedError naming `subject`, raised before anything is encoded.
 */
export function bindGathered(
  p: Params,
  gathered: readonly (readonly [string, GpuTensor])[],
  prefix: string,
  subject: string,
  what: string,
): WgslGathered[] {
  const words = gathered.reduce((a, [, t]) => a + 2 + 2 * t.rank, 0);
  if (p.size + words > PARAM_WORDS) {
    throw new UnsupportedError(
      `${what} on webgpu: its gathered inputs' views need ${words} words of params beside the program's ${p.size}, more than the ${PARAM_WORDS} a program has (fewer or lower-rank gathered inputs)`,
      { subject },
    );
  }
  return gathered.map(([name, t], i) => ({ name, binding: `${prefix}${i}`, view: p.view(t) }));
}

/**
 * The storage buffers a program binds (`own`, its output included, plus the gathered inputs) within the device's
 * limit, which may be as low as WebGPU's default of 8: an UnsupportedError naming `subject` otherwise.
 */
export function checkStorageLimit(
  device: GPUDevice,
  own: number,
  gathered: number,
  subject: string,
  what: string,
): void {
  const limit = device.limits.maxStorageBuffersPerShaderStage;
  if (own + gathered > limit) {
    throw new UnsupportedError(
      `${what} reading ${gathered} gathered input${gathered === 1 ? "" : "s"} on webgpu: this device binds at most ${limit} storage buffers per shader, the program needs ${own} of its own (at most ${Math.max(0, limit - own)} gathered inputs)`,
      { subject },
    );
  }
}

/** The type of `e` (int, num or bool), as checkExpr typed it. */
function typeOf(e: Expr): ExprType {
  if (typeof e === "number") return Number.isInteger(e) ? "int" : "num";
  if (typeof e === "string") return e === "score" ? "num" : "int";
  if (e.op === "input") return "num";
  return EXPR_OPS[e.op].type(e.args.map(typeOf)) as ExprType;
}

/** An f32 literal WGSL accepts (checkExpr keeps literals within float32), parenthesised when negative. */
function literal(x: number): string {
  if (Object.is(x, -0)) return "(-0.0)";
  const s = Number.isInteger(x) && Math.abs(x) < 1e21 ? `${x}.0` : String(x);
  return s.startsWith("-") ? `(${s})` : s;
}

const CALL: Partial<Record<string, (a: string[]) => string>> = {
  add: ([a, b]) => `${a} + ${b}`,
  sub: ([a, b]) => `${a} - ${b}`,
  mul: ([a, b]) => `${a} * ${b}`,
  div: ([a, b]) => `${a} / ${b}`,
  min: ([a, b]) => `min(${a}, ${b})`,
  max: ([a, b]) => `max(${a}, ${b})`,
  mod: ([a, b]) => `${a} - ${b} * floor(${a} / ${b})`,
  eq: ([a, b]) => `${a} == ${b}`,
  ne: ([a, b]) => `${a} != ${b}`,
  lt: ([a, b]) => `${a} < ${b}`,
  le: ([a, b]) => `${a} <= ${b}`,
  gt: ([a, b]) => `${a} > ${b}`,
  ge: ([a, b]) => `${a} >= ${b}`,
  not: ([a]) => `!${a}`,
  neg: ([a]) => `-${a}`,
  abs: ([a]) => `abs(${a})`,
  exp: ([a]) => `exp(${a})`,
  log: ([a]) => `log(${a})`,
  // tanh of a large |x| is ±1; some implementations compute it as a ratio of exponentials that overflows to NaN.
  tanh: ([a]) => `tanh(clamp(${a}, -20.0, 20.0))`,
  sqrt: ([a]) => `sqrt(${a})`,
  floor: ([a]) => `floor(${a})`,
};

/**
 * WGSL defining `fn <name>(score, b, h, q, kv) -> f32` (or `-> bool` for a mask) for `e`, with its helpers. The
 * gathered inputs' storage bindings and views are the program's (`gathered`, by the names the expression uses). With
 * `elements` (an elementwise expression), the function is `fn <name>(v0, v1, …) -> f32` of the current element of
 * each named input instead.
 */
export function exprWgsl(
  e: Expr,
  name: string,
  gathered: readonly WgslGathered[],
  elements?: readonly string[],
): string {
  const helpers: string[] = [
    // The identity, as a function: WGSL evaluates a builtin of literals (log(0.0), exp(100.0), 1.0 / 0.0) when it
    // compiles the shader and rejects one whose value is not finite. A user function's result is never a constant
    // expression, so an operation on literals only is given its first one through this and runs as at run time.
    `fn ${name}_rt(x: f32) -> f32 { return x; }`,
    // Python's mod and floor division of two integers, exact (f32 division may be off by an ulp: 41 / 41 < 1).
    `fn ${name}_imod(a: f32, b: f32) -> f32 { let x = i32(a); let y = i32(b); if (y == 0) { return a - b * floor(a / b); } var r = x % y; if (r != 0 && ((r < 0) != (y < 0))) { r += y; } return f32(r); }`,
    // sigmoid from exp(−|v|) only: exp never overflows, so a large negative v gives 0, never NaN.
    `fn ${name}_sigmoid(v: f32) -> f32 { let z = exp(-abs(v)); return select(z / (1.0 + z), 1.0 / (1.0 + z), v >= 0.0); }`,
    `fn ${name}_idiv(a: f32, b: f32) -> f32 { let x = i32(a); let y = i32(b); if (y == 0) { return floor(a / b); } var d = x / y; if (d * y != x && ((x < 0) != (y < 0))) { d -= 1; } return f32(d); }`,
  ];
  const byName = new Map(gathered.map((g) => [g.name, g]));
  const readers = new Map<string, string>();
  const reader = (input: string, rank: number): string => {
    let fn = readers.get(input);
    if (fn) return fn;
    const g = byName.get(input)!;
    fn = `${name}_read_${readers.size}`;
    readers.set(input, fn);
    const params = Array.from({ length: rank }, (_, a) => `i${a}: f32`).join(", ");
    const at = Array.from(
      { length: rank },
      (_, a) => ` + u32(clamp(i${a}, 0.0, f32(view_dim(${g.view}u, ${a}u)) - 1.0)) * view_stride(${g.view}u, ${a}u)`,
    ).join("");
    helpers.push(`fn ${fn}(${params}) -> f32 { return ${g.binding}[view_offset(${g.view}u)${at}]; }`);
    return fn;
  };
  const lines: string[] = [];
  let temps = 0;
  const indent = (n: number) => "  ".repeat(n);
  /** Emits the statements computing `x` at nesting `depth` of if blocks; returns the name that holds its value. */
  const emit = (x: Expr, depth: number): string => {
    if (typeof x === "number") return literal(x);
    if (typeof x === "string") return x;
    const t = `t${temps++}`;
    const wgslType = typeOf(x) === "bool" ? "bool" : "f32";
    if (x.op === "input") {
      // An elementwise expression's read of the current element: the function's parameter.
      const k = x.index.length === 0 && elements ? elements.indexOf(x.name) : -1;
      if (k >= 0) return `v${k}`;
      const index = x.index.map((i) => emit(i, depth));
      lines.push(`${indent(depth)}let ${t} = ${reader(x.name, x.index.length)}(${index.join(", ")});`);
      return t;
    }
    if (x.op === "where" || x.op === "and" || x.op === "or") {
      // Only the branch taken runs: `a && b` evaluates b only when a holds, `where` one of its two values.
      const c = emit(x.args[0]!, depth);
      lines.push(`${indent(depth)}var ${t}: ${wgslType};`);
      if (x.op === "where") {
        lines.push(`${indent(depth)}if (${c}) {`);
        lines.push(`${indent(depth + 1)}${t} = ${emit(x.args[1]!, depth + 1)};`);
        lines.push(`${indent(depth)}} else {`);
        lines.push(`${indent(depth + 1)}${t} = ${emit(x.args[2]!, depth + 1)};`);
        lines.push(`${indent(depth)}}`);
      } else {
        lines.push(`${indent(depth)}${t} = ${c};`);
        lines.push(`${indent(depth)}if (${x.op === "and" ? t : `!${t}`}) {`);
        lines.push(`${indent(depth + 1)}${t} = ${emit(x.args[1]!, depth + 1)};`);
        lines.push(`${indent(depth)}}`);
      }
      return t;
    }
    const ints = x.args.every((a) => typeOf(a) === "int");
    const args = x.args.map((a) => emit(a, depth));
    if (x.args.every((a) => typeof a === "number")) args[0] = `${name}_rt(${args[0]})`;
    let code: string;
    if (x.op === "mod" && ints) code = `${name}_imod(${args[0]}, ${args[1]})`;
    else if (x.op === "sigmoid") code = `${name}_sigmoid(${args[0]})`;
    else if (
      x.op === "floor" &&
      typeof x.args[0] === "object" &&
      x.args[0].op === "div" &&
      x.args[0].args.every((a) => typeOf(a) === "int")
    ) {
      // floor(a / b) of integers: the division node itself is not emitted, only its exact floor.
      const [a, b] = (x.args[0] as { args: readonly Expr[] }).args.map((y) => emit(y, depth));
      code = `${name}_idiv(${a}, ${b})`;
    } else code = CALL[x.op]!(args);
    lines.push(`${indent(depth)}let ${t} = ${code};`);
    return t;
  };
  const result = emit(e, 1);
  const type = typeOf(e) === "bool" ? "bool" : "f32";
  const params = elements
    ? elements.map((_, k) => `v${k}: f32`).join(", ")
    : "score: f32, b: f32, h: f32, q: f32, kv: f32";
  return [...helpers, `fn ${name}(${params}) -> ${type} {`, ...lines, `  return ${result};`, `}`].join("\n");
}
