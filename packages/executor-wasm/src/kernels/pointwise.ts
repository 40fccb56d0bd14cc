// pointwise: any elementwise expression (@attngraph/graph's expression form, reads with no index). A built-in op's
// expression (silu, relu and their derived gradients) runs as the SIMD loop rendered for it at build time
// (src/pointwise-as.ts → assembly/generated/pointwise.ts); any other (a user's op) on the module's expression
// interpreter (assembly/expr-program.ts, the one the fused attention runs its modifications on), compiled once per
// expression into vector instructions over tile-sized registers. Both compute the same numbers. No kernel per op.
import { exprKey, pointwiseCallExpr, POINTWISE_SLOTS, type Expr } from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { optionalInput, requireInput, type Call } from "./adapter.js";
import { compileProgram, type ExprProgram } from "./expr-program.js";
import { builtinPointwise } from "../pointwise-as.js";

/** A rendered built-in expression's export: n dense elements (a multiple of 4) of up to four inputs → out. */
type RenderedFn = (x0: number, x1: number, x2: number, x3: number, out: number, n: number) => void;

let rendered: Map<string, string> | undefined;
/** The export rendered for `expr` at build time, if it is a built-in one's. */
function renderedFor(ctx: WasmContext, expr: Expr): RenderedFn | undefined {
  rendered ??= new Map(builtinPointwise().map((p) => [exprKey(p.expr), p.name]));
  const name = rendered.get(exprKey(expr));
  // The generated exports are not in KernelExports (their names come from the op list): looked up by name.
  const fn = name === undefined ? undefined : (ctx.exports as unknown as Record<string, unknown>)[name];
  return typeof fn === "function" ? (fn as RenderedFn) : undefined;
}

const programs = new WeakMap<object, ExprProgram>();

/** The program of a checked expression (cached by the expression object the plan step keeps). */
function programOf(expr: Expr, node: string): ExprProgram {
  const key = typeof expr === "object" ? expr : undefined;
  const hit = key && programs.get(key);
  if (hit) return hit;
  const p = compileProgram({ scoreMod: expr, maskMod: null, derivative: false, node, elements: POINTWISE_SLOTS });
  if (key) programs.set(key, p);
  return p;
}

/** Inputs: x0 [...], x1…x3 [...] (optional, x0's shape) → x0's shape. */
export function pointwiseKernel(call: Call, ctx: WasmContext): WasmValue {
  const inputs = POINTWISE_SLOTS.map((name, i) =>
    i === 0 ? requireInput(call, 0, name) : optionalInput(call, i, name),
  );
  const expr = pointwiseCallExpr(call, inputs);
  const x0 = inputs[0]!;
  const out = ctx.output(call, x0.shape);
  if (out.size === 0) return out;
  const fast = renderedFor(ctx, expr);
  const temps: WasmValue[] = [];
  let loaded: WasmValue | undefined;
  try {
    // Strided inputs are copied dense first; the module reads each input as one run of floats.
    const dense = inputs.map((v, i) => {
      if (v === undefined) return undefined;
      const d = ctx.dense(v, `${call.node}.${POINTWISE_SLOTS[i]} (dense copy)`);
      if (d.temp) temps.push(d.value);
      return d.value;
    });
    const n = out.size;
    const whole = fast === undefined ? 0 : n & ~3;
    if (fast !== undefined) {
      const [a0, a1, a2, a3] = dense.map((d) => d?.address ?? 0);
      fast(a0!, a1!, a2!, a3!, out.address, whole);
      if (whole === n) return out;
    }
    // The interpreter: every element, or the last n mod 4 after a rendered loop.
    const { words, registers } = programOf(expr, call.node);
    loaded = ctx.alloc([words.length + 4], `${call.node} (pointwise program)`);
    const regsBytes = ctx.exports.exprRegsBytes(registers);
    const regs = ctx.scratch(regsBytes, call.node);
    // Views after the allocations: they may have grown the memory.
    const i32 = ctx.i32();
    const base = loaded.address / 4;
    i32.set(words, base);
    dense.forEach((d, k) => (i32[base + words.length + k] = d === undefined ? 0 : d.address + 4 * whole));
    ctx.i32().fill(0, regs / 4, regs / 4 + 16); // the status words
    ctx.exports.exprPointwise(
      loaded.address,
      regs,
      loaded.address + 4 * words.length,
      out.address + 4 * whole,
      n - whole,
    );
    return out;
  } finally {
    if (loaded) ctx.release(loaded);
    for (const t of temps) ctx.release(t);
  }
}
