// The built-in score and mask nodes an attention chain may hold, re-expressed as modifications (expressions over the
// score, b, h, q, kv and gathered inputs), so that the fused kernels cover them as they cover a user's score-mod and
// mask-mod: ALiBi (its slopes as literals per head, its alignment as an offset), a user 0/1 mask (a gathered read
// that hides where it is 0), an additive bias (a gathered read added to the scaled score) and the mask's and the
// softmax's scales. Each gives an expression and the gathered values it reads; where a node cannot be written so (a
// symbolic head count without slopes, a broadcast dim that is not known to be 1 or full), the reason is returned.
import { alibiSlopes, sameDim, type Expr, type SymShape } from "@attngraph/graph";
import type { DraftStep } from "./draft.js";

/** An expression and the values of the gathered names it reads (name → graph value). */
export interface ModPart {
  readonly expr: Expr;
  readonly names: readonly string[];
  readonly values: readonly string[];
}

const read = (name: string, index: Expr[]): Expr => ({ op: "input", name, index });

/** The literal per head h of `values`, as a balanced tree of `where` (depth log2 H, within any expression bound). */
function perHead(values: readonly number[], lo = 0, hi = values.length): Expr {
  if (hi - lo === 1) return Math.fround(values[lo]!);
  const mid = (lo + hi) >> 1;
  return { op: "where", args: [{ op: "lt", args: ["h", mid] }, perHead(values, lo, mid), perHead(values, mid, hi)] };
}

/**
 * ALiBi as a score modification: score + m_h · (kv − (q + off)), off = S − L for "bottom-right" (0 when L and S are
 * one dim). Its `scale` becomes the fused step's.
 */
export function alibiPart(step: DraftStep): ModPart | string {
  const [, h, l, s] = step.shape;
  const given = step.attrs.slopes as readonly number[] | null;
  if (given === null && typeof h !== "number")
    return `${step.node} has the paper's slopes for a head count not known when planning (${String(h)})`;
  const slopes = given ?? alibiSlopes(h as number);
  let q: Expr = "q";
  if (step.attrs.alignment === "bottom-right" && !sameDim(l!, s!)) {
    if (typeof l !== "number" || typeof s !== "number")
      return `${step.node} aligns bottom-right with L and S not known when planning`;
    q = { op: "add", args: ["q", s - l] };
  }
  return {
    expr: { op: "add", args: ["score", { op: "mul", args: [perHead(slopes), { op: "sub", args: ["kv", q] }] }] },
    names: [],
    values: [],
  };
}

/**
 * The index of a user mask or bias of shape `m` ([L, S], [B, L, S] or [B, H, L, S], dims of 1 broadcast) into the
 * scores [B, H, L, S]: the variable of each axis, or 0 where the dim is 1. A dim that may or may not be 1 (a symbol
 * other than the scores') has no one index.
 */
function userIndex(m: SymShape, scores: SymShape, node: string, field: string): Expr[] | string {
  const axes = m.length === 2 ? [2, 3] : m.length === 3 ? [0, 2, 3] : [0, 1, 2, 3];
  const vars: Expr[] = ["b", "h", "q", "kv"];
  const out: Expr[] = [];
  for (let i = 0; i < m.length; i++) {
    const d = m[i]!;
    const axis = axes[i]!;
    if (d === 1) out.push(0);
    else if (sameDim(d, scores[axis]!)) out.push(vars[axis]!);
    else
      return `${node}.${field} dim ${i} (${String(d)}) is neither 1 nor known to equal the scores' (${String(scores[axis])})`;
  }
  return out;
}

/** A user 0/1 mask as a mask modification: seen where mask[…] ≠ 0 (the mask kernel's rule: 0 hides). */
export function userMaskPart(step: DraftStep, value: string, shape: SymShape): ModPart | string {
  const index = userIndex(shape, step.shape, step.node, "mask");
  if (typeof index === "string") return index;
  return { expr: { op: "ne", args: [read("mask", index), 0] }, names: ["mask"], values: [value] };
}

/** An additive bias as part of a score modification: `x` + bias[…] (−∞ in the bias hides, as the softmax reads it). */
export function biasPart(step: DraftStep, value: string, shape: SymShape, x: Expr): ModPart | string {
  const index = userIndex(shape, step.shape, step.node, "bias");
  if (typeof index === "string") return index;
  return { expr: { op: "add", args: [x, read("bias", index)] }, names: ["bias"], values: [value] };
}

/** x · factor, leaving x as it is for a factor of 1. */
export function times(x: Expr, factor: number): Expr {
  return factor === 1 ? x : { op: "mul", args: [x, Math.fround(factor)] };
}
