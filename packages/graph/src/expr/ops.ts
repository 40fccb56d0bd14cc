// The expression operations, each declared once: its arity, the types it takes and gives, its value (for the
// interpreter and for constant folding) and its JavaScript (for compiled kernels). Other executors' code generators
// (WGSL, wasm) read the same table for arity and typing and supply their own spelling.
import type { ExprOpName, ExprType } from "./types.js";

export interface ExprOpSpec {
  readonly arity: number;
  /** The result type from the argument types, or a message saying what the arguments should have been. */
  readonly type: (args: readonly ExprType[]) => ExprType | string;
  /** The value (booleans as true/false). */
  readonly value: (...args: never[]) => number | boolean;
  /** JavaScript of the value from the arguments' JavaScript. */
  readonly js: (args: readonly string[]) => string;
}

const numeric = (t: ExprType) => t === "int" || t === "num";
const arith2 = (intResult: boolean) => (a: readonly ExprType[]) =>
  a.every(numeric) ? (intResult && a.every((t) => t === "int") ? "int" : "num") : "two numbers";
const arith1 = (intResult: boolean) => (a: readonly ExprType[]) =>
  numeric(a[0]!) ? (intResult && a[0] === "int" ? "int" : "num") : "a number";
const compare = (a: readonly ExprType[]) => (a.every(numeric) ? "bool" : "two numbers");
const logic = (a: readonly ExprType[]) =>
  a.every((t) => t === "bool") ? "bool" : a.length === 1 ? "true/false" : "two true/false values";

/** Python's `%`: the result has the sign of the divisor. */
export function pyMod(a: number, b: number): number {
  return a - b * Math.floor(a / b);
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

export const EXPR_OPS: Readonly<Record<ExprOpName, ExprOpSpec>> = {
  add: { arity: 2, type: arith2(true), value: (a: number, b: number) => a + b, js: ([a, b]) => `(${a} + ${b})` },
  sub: { arity: 2, type: arith2(true), value: (a: number, b: number) => a - b, js: ([a, b]) => `(${a} - ${b})` },
  mul: { arity: 2, type: arith2(true), value: (a: number, b: number) => a * b, js: ([a, b]) => `(${a} * ${b})` },
  div: { arity: 2, type: arith2(false), value: (a: number, b: number) => a / b, js: ([a, b]) => `(${a} / ${b})` },
  min: {
    arity: 2,
    type: arith2(true),
    value: (a: number, b: number) => Math.min(a, b),
    js: ([a, b]) => `Math.min(${a}, ${b})`,
  },
  max: {
    arity: 2,
    type: arith2(true),
    value: (a: number, b: number) => Math.max(a, b),
    js: ([a, b]) => `Math.max(${a}, ${b})`,
  },
  mod: { arity: 2, type: arith2(true), value: pyMod, js: ([a, b]) => `pyMod(${a}, ${b})` },
  eq: { arity: 2, type: compare, value: (a: number, b: number) => a === b, js: ([a, b]) => `(${a} === ${b})` },
  ne: { arity: 2, type: compare, value: (a: number, b: number) => a !== b, js: ([a, b]) => `(${a} !== ${b})` },
  lt: { arity: 2, type: compare, value: (a: number, b: number) => a < b, js: ([a, b]) => `(${a} < ${b})` },
  le: { arity: 2, type: compare, value: (a: number, b: number) => a <= b, js: ([a, b]) => `(${a} <= ${b})` },
  gt: { arity: 2, type: compare, value: (a: number, b: number) => a > b, js: ([a, b]) => `(${a} > ${b})` },
  ge: { arity: 2, type: compare, value: (a: number, b: number) => a >= b, js: ([a, b]) => `(${a} >= ${b})` },
  and: { arity: 2, type: logic, value: (a: boolean, b: boolean) => a && b, js: ([a, b]) => `(${a} && ${b})` },
  or: { arity: 2, type: logic, value: (a: boolean, b: boolean) => a || b, js: ([a, b]) => `(${a} || ${b})` },
  not: { arity: 1, type: logic, value: (a: boolean) => !a, js: ([a]) => `(!${a})` },
  neg: { arity: 1, type: arith1(true), value: (a: number) => -a, js: ([a]) => `(-${a})` },
  abs: { arity: 1, type: arith1(true), value: (a: number) => Math.abs(a), js: ([a]) => `Math.abs(${a})` },
  exp: { arity: 1, type: arith1(false), value: (a: number) => Math.exp(a), js: ([a]) => `Math.exp(${a})` },
  log: { arity: 1, type: arith1(false), value: (a: number) => Math.log(a), js: ([a]) => `Math.log(${a})` },
  tanh: { arity: 1, type: arith1(false), value: (a: number) => Math.tanh(a), js: ([a]) => `Math.tanh(${a})` },
  sqrt: { arity: 1, type: arith1(false), value: (a: number) => Math.sqrt(a), js: ([a]) => `Math.sqrt(${a})` },
  floor: {
    arity: 1,
    type: (a) => (numeric(a[0]!) ? "int" : "a number"),
    value: (a: number) => Math.floor(a),
    js: ([a]) => `Math.floor(${a})`,
  },
  sigmoid: { arity: 1, type: arith1(false), value: sigmoid, js: ([a]) => `sigmoid(${a})` },
  where: {
    arity: 3,
    type: ([c, a, b]) => {
      if (c !== "bool") return "a true/false condition, then two values";
      if (a === "bool" && b === "bool") return "bool";
      if (numeric(a!) && numeric(b!)) return a === "int" && b === "int" ? "int" : "num";
      return "a true/false condition, then two numbers or two true/false values";
    },
    value: (c: boolean, a: number, b: number) => (c ? a : b),
    js: ([c, a, b]) => `(${c} ? ${a} : ${b})`,
  },
};

export const EXPR_OP_NAMES = Object.keys(EXPR_OPS) as ExprOpName[];
