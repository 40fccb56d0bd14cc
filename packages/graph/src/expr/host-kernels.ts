// The expression kernels' loops, for every executor that runs them on the host in JavaScript (cpu; wasm, whose values
// it reads and writes in the module's memory): one copy of the element loop of score-mod / mask-mod and of the
// scattered gradient of a gathered input. Views are strided float32 (any layout); outputs dense row-major.
import { compileExpr, ExprIndexError, readSites, type ExprFn, type GatheredTensor } from "./compile.js";
import { AttnGraphError } from "@attngraph/tensor";
import { derive, treeSize } from "./derive.js";
import type { Expr } from "./types.js";

/** A strided float32 view: data, shape, strides and offset in elements. */
export interface F32View {
  readonly data: Float32Array;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

/**
 * Rows [start, end) of the [B, H, L] leading axes of x [B, H, L, S]: out[r · S + kv] = f(scale · x, b, h, q, kv), or
 * for a mask (f true/false) x where f holds and −∞ elsewhere. `out` is dense, written from `outOffset`.
 */
export function exprRows(
  x: F32View,
  f: ExprFn,
  scale: number,
  mask: boolean,
  out: Float32Array,
  outOffset: number,
  start: number,
  end: number,
): void {
  const [, H, L, S] = x.shape as [number, number, number, number];
  const [sb, sh, sq, sk] = x.strides as [number, number, number, number];
  const d = x.data;
  for (let r = start; r < end; r++) {
    const q = r % L;
    const h = Math.floor(r / L) % H;
    const b = Math.floor(r / (L * H));
    const base = x.offset + b * sb + h * sh + q * sq;
    const o = outOffset + r * S;
    if (mask) for (let kv = 0; kv < S; kv++) out[o + kv] = f(0, b, h, q, kv) ? d[base + kv * sk]! : -Infinity;
    else for (let kv = 0; kv < S; kv++) out[o + kv] = f(Math.fround(scale * d[base + kv * sk]!), b, h, q, kv) as number;
  }
}

/** The reads of the gathered input a gradient is for: d expr / d read and the index functions of each, compiled. */
export interface ReadGradSites {
  readonly sites: readonly { readonly d: ExprFn; readonly index: readonly ExprFn[]; readonly path: string }[];
  readonly shape: readonly number[];
  /** Row-major strides of `shape`: where an index lands in the sums. */
  readonly strides: readonly number[];
}

/** Each read of `wrt` in score modification `expr` (checked), compiled against `gathered`. */
export function readGradSites(
  expr: Expr,
  wrt: string,
  gathered: ReadonlyMap<string, GatheredTensor>,
  subject: string,
  shape: readonly number[],
): ReadGradSites {
  const sites = derivedReads(expr, wrt, subject).map((s) => ({
    d: compileExpr(s.derivative, gathered, s.path),
    index: s.index.map((i) => compileExpr(i, gathered, s.path)),
    path: s.path,
  }));
  return { sites, shape, strides: shape.map((_, a) => shape.slice(a + 1).reduce((p, n) => p * n, 1)) };
}

/**
 * Adds g · d expr / d read (at score, b, h, q, kv) into `sums` at the index of every read. A read whose derivative is
 * 0 (a branch `where` did not take) is skipped, index and all; an index out of range is an ExprIndexError.
 */
export function addReadGrads(
  r: ReadGradSites,
  sums: Float64Array,
  g: number,
  score: number,
  b: number,
  h: number,
  q: number,
  kv: number,
): void {
  for (const site of r.sites) {
    const d = site.d(score, b, h, q, kv) as number;
    if (d === 0) continue;
    let at = 0;
    for (let a = 0; a < site.index.length; a++) {
      const i = site.index[a]!(score, b, h, q, kv) as number;
      if (i >>> 0 !== i || i >= r.shape[a]!) throw new ExprIndexError(site.path, a, r.shape[a]!, i, [b, h, q, kv]);
      at += i * r.strides[a]!;
    }
    sums[at] = sums[at]! + g * d;
  }
}

/**
 * The gradient of gathered input `wrt` of score modification `expr`: for rows [start, end) of x and grad [B, H, L, S],
 * grad · d expr / d read added into `sums` (float64, row-major over the input's shape) at the index of every read of
 * `wrt`. A read whose derivative is 0 (a branch `where` did not take) is skipped, index and all.
 */
export function inputGradRows(
  expr: Expr,
  wrt: string,
  gathered: ReadonlyMap<string, GatheredTensor>,
  subject: string,
): (x: F32View, grad: F32View, scale: number, sums: Float64Array, start: number, end: number) => void {
  const target = gathered.get(wrt)!;
  const sites = readGradSites(expr, wrt, gathered, subject, target.shape);
  return (x, grad, scale, sums, start, end) => {
    const [, H, L, S] = x.shape as [number, number, number, number];
    const [xb, xh, xq, xk] = x.strides as [number, number, number, number];
    const [gb, gh, gq, gk] = grad.strides as [number, number, number, number];
    for (let r = start; r < end; r++) {
      const q = r % L;
      const h = Math.floor(r / L) % H;
      const b = Math.floor(r / (L * H));
      for (let kv = 0; kv < S; kv++) {
        const g = grad.data[grad.offset + b * gb + h * gh + q * gq + kv * gk]!;
        if (g === 0) continue;
        const score = Math.fround(scale * x.data[x.offset + b * xb + h * xh + q * xq + kv * xk]!);
        addReadGrads(sites, sums, g, score, b, h, q, kv);
      }
    }
  };
}

/** The most nodes a derivative may have (the bound of any expression: checkExpr's). */
const MAX_DERIVED = 10_000;

interface DerivedRead {
  readonly derivative: Expr;
  readonly index: readonly Expr[];
  readonly path: string;
}

/** Derivatives by expression (a checked copy, kept by its step) and input: derived once, compiled from cache. */
const derivedByExpr = new WeakMap<object, Map<string, readonly DerivedRead[]>>();

/** Each read of `wrt` in `expr` with d expr / d read; a derivative past MAX_DERIVED nodes is an "unsupported" error. */
function derivedReads(expr: Expr, wrt: string, subject: string): readonly DerivedRead[] {
  const byInput =
    typeof expr === "object"
      ? (derivedByExpr.get(expr) ?? new Map<string, readonly DerivedRead[]>())
      : new Map<string, readonly DerivedRead[]>();
  const key = `${wrt}|${subject}`;
  let list = byInput.get(key);
  if (list === undefined) {
    list = readSites(expr)
      .filter((s) => s.read.name === wrt)
      .map((s) => {
        const derivative = derive(expr, { kind: "read", read: s.read });
        if (treeSize(derivative, MAX_DERIVED) > MAX_DERIVED) {
          throw new AttnGraphError(
            "unsupported",
            `unsupported: the gradient of ${wrt} at ${subject}${s.path}: its derivative has more than ${MAX_DERIVED} nodes`,
            { subject: `${subject}${s.path}` },
          );
        }
        return { derivative, index: s.read.index, path: `${subject}${s.path}` };
      });
    byInput.set(key, list);
    if (typeof expr === "object") derivedByExpr.set(expr, byInput);
  }
  return list;
}
