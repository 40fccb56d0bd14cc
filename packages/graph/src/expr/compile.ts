// An expression as a JavaScript function of (score, b, h, q, kv), for kernels written in JavaScript (the cpu executor,
// the host side of others). Compiled to source once per binding of its gathered inputs, so the engine's JIT sees plain
// arithmetic; where the page forbids generated code (a Content-Security-Policy without 'unsafe-eval'), the same
// expression runs as a tree of closures: slower, identical results. Every gathered read checks its indices: a read out
// of range (or at a non-integer) throws an ExprIndexError naming the sub-expression, never returns undefined or NaN.
import { AttnGraphError } from "@attngraph/tensor";
import { EXPR_OPS, pyMod, sigmoid } from "./ops.js";
import { isInput, type Expr, type ExprInput, type ExprType } from "./types.js";

/** A gathered input as a kernel holds it: float32 data with its shape, strides and offset (in elements). */
export interface GatheredTensor {
  readonly data: Float32Array | Int32Array;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

/** The compiled expression: a number for a score modification, true/false for a mask modification. */
export type ExprFn = (score: number, b: number, h: number, q: number, kv: number) => number | boolean;

/** A gathered index outside its input (or not an integer) at run time. `subject` names the sub-expression. */
export class ExprIndexError extends AttnGraphError {
  constructor(subject: string, axis: number, size: number, value: number, at: readonly number[]) {
    super(
      "index",
      `${subject}: gathered index ${value} on axis ${axis} is out of range at b=${at[0]}, h=${at[1]}, q=${at[2]}, kv=${at[3]}, expected an integer in [0, ${size})`,
      {
        subject,
        expected: `an integer in [0, ${size})`,
        got: String(value),
      },
    );
    this.name = "ExprIndexError";
  }
}

/** Each gathered read of `e`, in evaluation order, with the path that names it in messages. */
export function readSites(e: Expr, path = ""): { readonly read: ExprInput; readonly path: string }[] {
  if (typeof e !== "object") return [];
  if (isInput(e)) return [...e.index.flatMap((i, k) => readSites(i, `${path}.index[${k}]`)), { read: e, path }];
  return e.args.flatMap((a, k) => readSites(a, `${path}.args[${k}]`));
}

type Reader = (b: number, h: number, q: number, kv: number, ...index: number[]) => number;

/**
 * A checked read of `t` for the read at `subject` (its indices, then the position for the message). Ranks 1 to 4 get a
 * function of their own (no rest array per read: these run once per score element).
 */
function reader(t: GatheredTensor, subject: string): Reader {
  const { data, shape, strides, offset } = t;
  const fail = (axis: number, i: number, b: number, h: number, q: number, kv: number): never => {
    throw new ExprIndexError(subject, axis, shape[axis]!, i, [b, h, q, kv]);
  };
  // (i >>> 0) === i: a non-negative integer below 2³²; NaN, fractions and negatives fail it.
  const ok = (i: number, axis: number) => i >>> 0 === i && i < shape[axis]!;
  // Only after a read failed: which of its indices did (the first, as the reads check them in order).
  const failFirst = (index: readonly number[], b: number, h: number, q: number, kv: number): never => {
    const axis = index.findIndex((i, a) => !ok(i, a));
    return fail(axis, index[axis]!, b, h, q, kv);
  };
  const [s0 = 0, s1 = 0, s2 = 0, s3 = 0] = strides;
  switch (shape.length) {
    case 1:
      return (b, h, q, kv, i0 = 0) => (ok(i0, 0) ? data[offset + i0 * s0]! : fail(0, i0, b, h, q, kv));
    case 2:
      return (b, h, q, kv, i0 = 0, i1 = 0) =>
        ok(i0, 0) && ok(i1, 1) ? data[offset + i0 * s0 + i1 * s1]! : failFirst([i0, i1], b, h, q, kv);
    case 3:
      return (b, h, q, kv, i0 = 0, i1 = 0, i2 = 0) =>
        ok(i0, 0) && ok(i1, 1) && ok(i2, 2)
          ? data[offset + i0 * s0 + i1 * s1 + i2 * s2]!
          : failFirst([i0, i1, i2], b, h, q, kv);
    case 4:
      return (b, h, q, kv, i0 = 0, i1 = 0, i2 = 0, i3 = 0) =>
        ok(i0, 0) && ok(i1, 1) && ok(i2, 2) && ok(i3, 3)
          ? data[offset + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3]!
          : failFirst([i0, i1, i2, i3], b, h, q, kv);
    default:
      return (b, h, q, kv, ...index) => {
        let at = offset;
        for (let a = 0; a < index.length; a++) {
          const i = index[a]!;
          if (!ok(i, a)) fail(a, i, b, h, q, kv);
          at += i * strides[a]!;
        }
        return data[at]!;
      };
  }
}

/**
 * `e` (checked by checkExpr) as a function, its gathered inputs bound to `inputs` (by name). `subject` starts the
 * messages of its read errors (`node flex: scoreMod`).
 */
export function compileExpr(
  e: Expr,
  inputs: ReadonlyMap<string, GatheredTensor>,
  subject: string,
  options: CompileOptions = {},
): ExprFn {
  const { reads, readers, round } = bound(e, inputs, subject, options);
  if (options.closures) return compileClosures(e, reads, readers, round);
  try {
    return compileSource(e, reads, readers, round);
  } catch (err) {
    if (!(err instanceof EvalError)) throw err;
    return compileClosures(e, reads, readers, round); // generated code forbidden here (CSP)
  }
}

/** What both forms bind: the expression's reads, a reader per read (its errors named by path) and the rounding. */
function bound(e: Expr, inputs: ReadonlyMap<string, GatheredTensor>, subject: string, options: CompileOptions) {
  const sites = readSites(e);
  return {
    reads: sites.map((s) => s.read),
    readers: sites.map((s) => reader(inputs.get(s.read.name)!, `${subject}${s.path}`)),
    round: options.float64 ? (x: number) => x : Math.fround,
  };
}

export interface CompileOptions {
  /**
   * Evaluate in float64 instead of rounding every step to float32 as the executors do: for references and finite
   * differences, never for a kernel.
   */
  readonly float64?: boolean;
  /** The closure form even where generated code is allowed (what runs under a CSP): for tests of that form. */
  readonly closures?: boolean;
}

/** Generated factories by expression (the attribute object a plan step keeps): generated once, bound per call. */
const factories = new WeakMap<object, (...a: unknown[]) => ExprFn>();

function compileSource(
  e: Expr,
  reads: readonly ExprInput[],
  readers: readonly Reader[],
  round: (x: number) => number,
): ExprFn {
  const cached = typeof e === "object" ? factories.get(e) : undefined;
  if (cached) return cached(pyMod, sigmoid, round, ...readers);
  const js = (x: Expr): string => {
    // A literal in parentheses: `-(-5)` must not become `--5`. Literals are float32 values already (checkExpr).
    if (typeof x === "number") return `(${Object.is(x, -0) ? "-0" : String(x)})`;
    if (typeof x === "string") return x;
    if (isInput(x)) return `r${reads.indexOf(x)}(b, h, q, kv${x.index.map((i) => `, ${js(i)}`).join("")})`;
    const code = EXPR_OPS[x.op].js(x.args.map(js));
    // Every number is float32, as WGSL and wasm compute it (and PyTorch's float32): exp(94) is +∞ on every executor.
    return EXPR_OPS[x.op].type(x.args.map(typeOfArg)) === "bool" ? code : `f(${code})`;
  };
  const names = readers.map((_, i) => `r${i}`);
  const make = new Function(
    "pyMod",
    "sigmoid",
    "f",
    ...names,
    `"use strict"; return function (score, b, h, q, kv) { return ${js(e)}; };`,
  ) as (...a: unknown[]) => ExprFn;
  if (typeof e === "object") factories.set(e, make);
  return make(pyMod, sigmoid, round, ...readers);
}

function compileClosures(
  e: Expr,
  reads: readonly ExprInput[],
  readers: readonly Reader[],
  round: (x: number) => number,
): ExprFn {
  type Node = (s: number, b: number, h: number, q: number, kv: number) => number | boolean;
  const build = (x: Expr): Node => {
    if (typeof x === "number") return () => x;
    if (x === "score") return (s) => s;
    if (x === "b") return (_s, b) => b;
    if (x === "h") return (_s, _b, h) => h;
    if (x === "q") return (_s, _b, _h, q) => q;
    if (x === "kv") return (_s, _b, _h, _q, kv) => kv;
    if (isInput(x)) {
      const read = readers[reads.indexOf(x)]!;
      const index = x.index.map(build);
      return (s, b, h, q, kv) => read(b, h, q, kv, ...index.map((i) => i(s, b, h, q, kv) as number));
    }
    const op = EXPR_OPS[x.op].value as (...a: unknown[]) => number | boolean;
    const value = (...a: unknown[]) => {
      const v = op(...a);
      return typeof v === "number" ? round(v) : v;
    };
    const args = x.args.map(build);
    if (x.op === "where") return (s, b, h, q, kv) => (args[0]!(s, b, h, q, kv) ? args[1]! : args[2]!)(s, b, h, q, kv);
    if (x.op === "and")
      return (s, b, h, q, kv) => Boolean(args[0]!(s, b, h, q, kv)) && Boolean(args[1]!(s, b, h, q, kv));
    if (x.op === "or")
      return (s, b, h, q, kv) => Boolean(args[0]!(s, b, h, q, kv)) || Boolean(args[1]!(s, b, h, q, kv));
    return (s, b, h, q, kv) => value(...args.map((a) => a(s, b, h, q, kv)));
  };
  return build(e);
}

/** A sub-expression's type for code generation: bool for comparisons and logic, a number otherwise. */
function typeOfArg(e: Expr): ExprType {
  if (typeof e !== "object" || isInput(e)) return "num";
  const t = EXPR_OPS[e.op].type(e.args.map(typeOfArg));
  return t === "bool" ? "bool" : "num";
}
