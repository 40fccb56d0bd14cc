// Pieces the built-in backward rules share. Each adds graph nodes through the rule's context; none computes anything.
import type { Dim, SymShape } from "./dims.js";
import type { VjpContext } from "./vjp.js";

// biome-ignore lint/suspicious/noExplicitAny: every op's rule shares these, whatever its attributes
type AnyVjpContext = VjpContext<any>;

/** The output's gradient; a rule other than a loss's cannot start from the implicit 1 of a scalar loss. */
export function gradOf(ctx: AnyVjpContext, kind: string): string {
  if (ctx.grad === undefined)
    ctx.unsupported(
      `a scalar loss from op ${kind} (only cross-entropy seeds its own gradient; differentiate a non-scalar value, whose gradient is then an input)`,
    );
  return ctx.grad;
}

/** Whether two dims are provably the same (equal numbers or the same name). */
export function sameDimExactly(a: Dim, b: Dim): boolean {
  return a === b;
}

export function sameShapeExactly(a: SymShape, b: SymShape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * The gradient of a value that was broadcast to `grad`'s shape: `grad` itself when no broadcast happened, else summed
 * back (`sum-to`). Added as input `i`'s gradient.
 */
export function unbroadcast(ctx: AnyVjpContext, i: number, grad: string, target: SymShape): string {
  if (sameShapeExactly(ctx.shapeOf(grad), target)) return grad;
  return ctx.addGrad(i, "sum-to", { x: grad }, { shape: [...target] });
}

/**
 * The gradient of projection-like ops (projection, out-proj; the linear part of linear-gelu) from the gradient `g` of
 * their pre-activation output: dx = g · W (a projection by Wᵀ, a view), dW = Σ gᵀ · x, db = Σ g.
 */
export function linearGrads(ctx: AnyVjpContext, g: string): (string | undefined)[] {
  const [x, w, b] = ctx.inputs;
  const dx = ctx.needs(0)
    ? ctx.addGrad(0, "projection", { x: g, weight: ctx.add("transpose", "weight.t", { x: w }, { perm: [1, 0] }) })
    : undefined;
  const dw = ctx.needs(1) ? ctx.addGrad(1, "linear-weight-grad", { grad: g, x }) : undefined;
  const db =
    b !== undefined && ctx.needs(2) ? ctx.addGrad(2, "sum-to", { x: g }, { shape: [...ctx.shapeOf(b)] }) : undefined;
  return [dx, dw, db];
}

/**
 * Input `i`'s gradient from a per-query-head product `kind(inputs)` [B, H, S, D]: summed over each group of H/Hkv query
 * heads that shared one key/value head → [B, Hkv, S, D] (grouped-query attention). With H = Hkv the product is already
 * the gradient and is added as it.
 */
export function sumHeadGroups(
  ctx: AnyVjpContext,
  i: number,
  kind: string,
  inputs: Readonly<Record<string, string>>,
  kvShape: SymShape,
  step: string,
): string {
  const [b, hkv, s, d] = kvShape;
  const h = ctx.shapeOf(ctx.output)[1]!;
  if (sameDimExactly(h, hkv!)) return ctx.addGrad(i, kind, inputs);
  if (typeof h !== "number" || typeof hkv !== "number")
    ctx.unsupported(`grouped heads with symbolic head counts (H=${h}, Hkv=${hkv})`);
  const perHead = ctx.add(kind, `${step}.heads`, inputs); // [B, H, S, D]
  const split = ctx.add("reshape", `${step}.groups`, { x: perHead }, { shape: [b!, hkv, h / hkv, s!, d!] });
  const summed = ctx.add("sum-to", `${step}.sum`, { x: split }, { shape: [b!, hkv, 1, s!, d!] });
  return ctx.addGrad(i, "reshape", { x: summed }, { shape: [b!, hkv, s!, d!] });
}

/**
 * The gradient of the grouped operand of a per-head product (k of a score, v of a weighted sum), input 1:
 * `weights`ᵀ · `v` per query head (`weights` transposed as the view `name`), summed over each key/value head's group.
 */
export function groupedOperandGrad(
  ctx: AnyVjpContext,
  weights: string,
  name: string,
  v: string,
  step: string,
): string | undefined {
  if (!ctx.needs(1)) return undefined;
  const inputs = { weights: swapLast(ctx, weights, name), v };
  return sumHeadGroups(ctx, 1, "weighted-sum", inputs, ctx.shapeOf(ctx.inputs[1]!), step);
}

/** Swaps the last two axes of a [B, H, X, Y] value (a view). */
export function swapLast(ctx: AnyVjpContext, value: string, name: string): string {
  return ctx.add("transpose", name, { x: value }, { perm: [0, 1, 3, 2] });
}
