// A fused attention call's score and mask modifications on the wasm executor (graph's ops/attention-mods.ts says what
// they mean): the expressions checked against the gathered slots, compiled once into the module's block program
// (expr-program.ts), loaded into module memory per call with the gathered inputs' descriptors, and, after the
// kernels ran it tile by tile, their status words read back: an index out of range becomes the ExprIndexError the
// reference (compileExpr) gives, naming the sub-expression and the element.
import {
  checkExprCached,
  ExprIndexError,
  gatheredOfCall,
  hasMods,
  type AttentionMods,
  type Expr,
} from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { optionalInput, type Call } from "./adapter.js";
import { compileProgram, type ExprProgram } from "./expr-program.js";

/** A call's modifications: its compiled program and the gathered values it reads. */
export interface CallMods {
  readonly program: ExprProgram;
  /** With both modifications: the program of the score modification alone, for blocks the mask keeps whole. */
  readonly scoreOnly: ExprProgram | undefined;
  readonly gathered: ReadonlyMap<string, WasmValue>;
}

/**
 * The modifications of a fused attention call whose gathered slots start at `first`, or undefined when it has none.
 * `derivative`: the program also computes ∂scoreMod/∂score (the backward wrt q and k).
 */
export function callMods(call: Call, first: number, derivative: boolean): CallMods | undefined {
  const attrs = call.attrs as AttentionMods;
  if (!hasMods(attrs)) return undefined;
  const gathered = gatheredOfCall(call, first, (slot, n) => optionalInput(call, slot, n));
  const inputs = new Map([...gathered].map(([n, v]) => [n, v.rank]));
  const check = (field: "scoreMod" | "maskMod", role: "score" | "mask"): Expr | null => {
    const raw = attrs[field] ?? null;
    return raw === null ? null : checkExprCached(raw, { subject: `${call.node}.${field}`, role, inputs });
  };
  const scoreMod = check("scoreMod", "score");
  const maskMod = check("maskMod", "mask");
  const scoreOnly =
    scoreMod !== null && maskMod !== null ? programFor(scoreMod, null, derivative, call.node) : undefined;
  return { program: programFor(scoreMod, maskMod, derivative, call.node), scoreOnly, gathered };
}

/** Programs by checked expression (objects a plan step keeps), then by mask, then by derivative and node. */
const programs = new WeakMap<object, WeakMap<object, Map<string, ExprProgram>>>();
const NONE = {};
const primitives = new Map<string, object>();

/** A WeakMap key for an expression: itself, or one object per literal or variable (a bare `"score"`, a `1`). */
function keyOf(e: Expr | null): object {
  if (e === null) return NONE;
  if (typeof e === "object") return e;
  const k = JSON.stringify(e);
  let o = primitives.get(k);
  if (o === undefined) primitives.set(k, (o = {}));
  return o;
}

function programFor(scoreMod: Expr | null, maskMod: Expr | null, derivative: boolean, node: string): ExprProgram {
  const a = keyOf(scoreMod);
  const b = keyOf(maskMod);
  let byMask = programs.get(a);
  if (byMask === undefined) programs.set(a, (byMask = new WeakMap()));
  let byNode = byMask.get(b);
  if (byNode === undefined) byMask.set(b, (byNode = new Map()));
  const key = `${derivative ? 1 : 0}${node}`;
  let p = byNode.get(key);
  if (p === undefined) byNode.set(key, (p = compileProgram({ scoreMod, maskMod, derivative, node })));
  return p;
}

/** A program in module memory for one call: release `value` when the call is done. */
export interface LoadedProgram {
  readonly address: number;
  readonly value: WasmValue;
  /** Bytes of one register area (status words and registers): each thread's call needs its own. */
  readonly regsBytes: number;
}

/** Copies the program into module memory with the call's gathered inputs' descriptors (address, shape, strides). */
export function loadProgram(
  ctx: WasmContext,
  mods: CallMods,
  node: string,
  program: ExprProgram = mods.program,
): LoadedProgram {
  const { words, descriptors, registers } = program;
  const value = ctx.alloc([words.length], `${node} (modification program)`);
  // Views after the allocation: it may have grown the memory.
  const i32 = ctx.i32();
  const base = value.address / 4;
  i32.set(words, base);
  for (const [name, { offset, rank }] of descriptors) {
    const g = mods.gathered.get(name)!;
    const at = base + offset;
    i32[at] = g.address;
    i32[at + 1] = rank;
    i32[at + 2] = g.dtype === "int32" ? 1 : 0;
    for (let a = 0; a < rank; a++) {
      i32[at + 3 + a] = g.shape[a]!;
      i32[at + 3 + rank + a] = g.strides[a]!;
    }
  }
  return { address: value.address, value, regsBytes: ctx.exports.exprRegsBytes(registers) };
}

/** Where a call's register area goes in a scratch of `kernelBytes` bytes at `scratch` (16-byte aligned, after it). */
export function regsAfter(scratch: number, kernelBytes: number): number {
  return (scratch + kernelBytes + 15) & ~15;
}

/** Bytes of scratch a call needs: the kernel's own, then (with a program) the register area, aligned. */
export function scratchWithRegs(kernelBytes: number, loaded: LoadedProgram | undefined): number {
  return loaded === undefined ? kernelBytes : kernelBytes + 16 + loaded.regsBytes;
}

/** Clears a register area's status words before a run. */
export function clearStatus(ctx: WasmContext, regs: number): void {
  ctx.i32().fill(0, regs / 4, regs / 4 + 16);
}

/**
 * Points a call's block at its loaded program and at its register area (after the kernel's `kernelBytes` of scratch at
 * `scratch`), the area's status cleared for the run, as the forward and backward calls both do.
 */
export function attachProgram(
  ctx: WasmContext,
  block: { prog: number; regs: number },
  loaded: LoadedProgram,
  scratch: number,
  kernelBytes: number,
): void {
  block.prog = loaded.address;
  block.regs = regsAfter(scratch, kernelBytes);
  clearStatus(ctx, block.regs);
}

/** Whether the run using register area `regs` recorded an index error. */
export function failed(ctx: WasmContext, regs: number): boolean {
  return ctx.i32()[regs / 4] !== 0;
}

/** Throws the index error recorded in the first of these register areas that holds one. */
export function throwIfFailed(ctx: WasmContext, mods: CallMods, regsList: readonly number[]): void {
  for (const regs of regsList) {
    const i32 = ctx.i32();
    const w = regs / 4;
    if (i32[w] === 0) continue;
    const site = mods.program.sites[i32[w + 1]!]!;
    const axis = i32[w + 2]!;
    const value = ctx.f64()[(regs + 16) / 8]!;
    const shape = mods.gathered.get(site.input)!.shape;
    throw new ExprIndexError(site.subject, axis, shape[axis]!, value, [
      i32[w + 6]!,
      i32[w + 7]!,
      i32[w + 8]!,
      i32[w + 9]!,
    ]);
  }
}
