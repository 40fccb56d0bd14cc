// pointwise: any elementwise expression (@attngraph/graph's expression form, reads with no index) on the module's
// expression interpreter (assembly/expr-program.ts, the one the fused attention runs its modifications on): compiled
// once per expression into a program of vector instructions over tile-sized registers, run a tile of 4096 elements at a
// time. silu, its gradient and every other op declared by an expression run here: no kernel per op.
import { pointwiseCallExpr, POINTWISE_SLOTS, type Expr } from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { optionalInput, requireInput, type Call } from "./adapter.js";
import { compileProgram, type ExprProgram } from "./expr-program.js";

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
  const inputs = POINTWISE_SLOTS.map((name, i) => (i === 0 ? requireInput(call, 0, name) : optionalInput(call, i, name)));
  const expr = pointwiseCallExpr(call, inputs);
  const x0 = inputs[0]!;
  const out = ctx.output(call, x0.shape);
  if (out.size === 0) return out;
  const program = programOf(expr, call.node);
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
    const { words, registers } = program;
    loaded = ctx.alloc([words.length + 4], `${call.node} (pointwise program)`);
    const regsBytes = ctx.exports.exprRegsBytes(registers);
    const regs = ctx.scratch(regsBytes, call.node);
    // Views after the allocations: they may have grown the memory.
    const i32 = ctx.i32();
    const base = loaded.address / 4;
    i32.set(words, base);
    dense.forEach((d, k) => (i32[base + words.length + k] = d?.address ?? 0));
    ctx.i32().fill(0, regs / 4, regs / 4 + 16); // the status words
    ctx.exports.exprPointwise(loaded.address, regs, loaded.address + 4 * words.length, out.address, out.size);
    return out;
  } finally {
    if (loaded) ctx.release(loaded);
    for (const t of temps) ctx.release(t);
  }
}
