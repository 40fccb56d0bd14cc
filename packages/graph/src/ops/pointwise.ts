// Elementwise ops as expressions. `pointwise` is the generic op (an expression over the elements of up to four inputs
// of one shape), the form every executor runs; definePointwiseOp declares a named elementwise op (silu, …) by its
// expression alone: its shape rule, its in-place use and its gradient (derive(), as another pointwise node) follow.
import type { SymShape } from "../dims.js";
import { defineOp, type OpContext, type OpDef } from "../op-def.js";
import { checkPointwise, elementsRead, pointwiseVjpExpr, POINTWISE_SLOTS } from "../expr/pointwise.js";
import { renameReads } from "../expr/rename.js";
import type { Expr } from "../expr/types.js";
import { GraphValidationError } from "../errors.js";
import type { CallInfo, Shaped } from "../kernel-checks.js";
import { expectSameShape } from "../kernel-checks-backward.js";
import { gradOf, sameShapeExactly } from "../vjp-helpers.js";
import type { VjpContext } from "../vjp.js";

export interface PointwiseAttrs {
  /** A number from the elements of x0…x3 (reads with no index: `{ "op": "input", "name": "x0", "index": [] }`). */
  readonly expr: Expr;
}

/** Every present input has the first one's shape, which is the output's. */
function sameShapes(names: readonly string[], inputs: readonly (SymShape | undefined)[], ctx: OpContext): SymShape {
  const first = inputs[0]!;
  inputs.forEach((s, i) => {
    if (s !== undefined && !sameShapeExactly(s, first))
      ctx.fail(
        names[i]!,
        `elementwise inputs must have ${names[0]}'s shape`,
        `[${first.join(", ")}]`,
        `[${s.join(", ")}]`,
      );
  });
  return first;
}

/**
 * Input `i`'s gradient as a pointwise expression: grad · ∂e/∂x_i over the slots (the output's gradient in x0, then the
 * forward inputs the derivative reads, in `reads` order: slot names of `e`). Fails when that is more than four inputs.
 */
export function pointwiseGrad(e: Expr, i: number): { readonly expr: Expr; readonly reads: readonly string[] } | string {
  const d = pointwiseVjpExpr(e, POINTWISE_SLOTS[i]!, "grad");
  const reads = elementsRead(d).filter((n) => n !== "grad");
  if (reads.length + 1 > POINTWISE_SLOTS.length)
    return `the derivative reads ${reads.length + 1} inputs (a pointwise node takes at most ${POINTWISE_SLOTS.length})`;
  const names = new Map<string, string>([
    ["grad", "x0"],
    ...reads.map((n, k) => [n, POINTWISE_SLOTS[k + 1]!] as [string, string]),
  ]);
  return {
    expr: checkPointwise(renameReads(d, names), "pointwise gradient", POINTWISE_SLOTS.slice(0, reads.length + 1)),
    reads,
  };
}

/** The gradient of each input of an elementwise expression `e` over the slots: one pointwise node per input. */
// biome-ignore lint/suspicious/noExplicitAny: the rule of any pointwise op, whatever its attributes (VjpContext is contravariant in them)
function pointwiseVjp(ctx: VjpContext<any>, e: Expr, kind: string): (string | undefined)[] {
  const g = gradOf(ctx, kind);
  return ctx.inputs.map((v, i) => {
    if (v === undefined || !ctx.needs(i)) return undefined;
    const grad = gradExprs(e)[i] ?? pointwiseGrad(e, i);
    if (typeof grad === "string") return ctx.unsupported(`${kind}: ${grad}`);
    const inputs: Record<string, string> = { x0: g };
    grad.reads.forEach((n, k) => (inputs[POINTWISE_SLOTS[k + 1]!] = ctx.inputs[POINTWISE_SLOTS.indexOf(n as never)]!));
    return ctx.addGrad(i, "pointwise", inputs, { expr: grad.expr });
  });
}

/** Derived gradients by forward expression: derived once, so every training step's graph holds the same objects. */
const gradCache = new WeakMap<object, ReturnType<typeof pointwiseGrad>[]>();
function gradExprs(e: Expr): ReturnType<typeof pointwiseGrad>[] {
  if (typeof e !== "object") return [];
  let list = gradCache.get(e);
  if (list === undefined) {
    list = POINTWISE_SLOTS.map((_, i) => pointwiseGrad(e, i));
    gradCache.set(e, list);
  }
  return list;
}

/** Checked expressions by the attribute object a node holds (its `expr`): checked once, the same object after. */
const checkedByRaw = new WeakMap<object, Expr>();

/** A node's `expr` attribute checked against its present inputs (cached by the attribute's object). */
export function pointwiseExprOf(raw: unknown, subject: string, present: readonly string[] = POINTWISE_SLOTS): Expr {
  const hit = typeof raw === "object" && raw !== null ? checkedByRaw.get(raw) : undefined;
  if (hit !== undefined && elementsRead(hit).every((n) => present.includes(n))) return hit;
  const e = checkPointwise(raw, subject, present);
  if (typeof raw === "object" && raw !== null) checkedByRaw.set(raw, e);
  return e;
}

/**
 * An elementwise expression over the elements of up to four inputs of one shape, e.g. x0 · sigmoid(x0). Executors
 * evaluate the expression (float32 after every operation); its gradient is derived. x0 [...], x1…x3 [...] (optional,
 * the same shape) → the same shape.
 */
export const pointwiseOp = defineOp<PointwiseAttrs>({
  kind: "pointwise",
  doc: "An elementwise expression over up to four inputs of one shape (reads with no index); its gradient is derived.",
  inputs: [
    { name: "x0", doc: "[...]" },
    { name: "x1", optional: true, doc: "[...], x0's shape" },
    { name: "x2", optional: true, doc: "[...], x0's shape" },
    { name: "x3", optional: true, doc: "[...], x0's shape" },
  ],
  attrs: { expr: { type: "expr", doc: "a number from the elements of x0…x3: reads with an empty index" } },
  inPlace: 0,
  inferShape: (inputs, attrs, ctx) => {
    const present = POINTWISE_SLOTS.filter((_, i) => inputs[i] !== undefined);
    pointwiseExprOf(attrs.expr, `${ctx.node}.expr`, present);
    return sameShapes(POINTWISE_SLOTS, inputs, ctx);
  },
  vjp: (ctx) => pointwiseVjp(ctx, pointwiseExprOf(ctx.attrs.expr, `${ctx.node}.expr`), "pointwise"),
});

export interface PointwiseOpSpec {
  readonly kind: string;
  readonly doc: string;
  /** The inputs' names (and docs), all of one shape; at most four. */
  readonly inputs: readonly { readonly name: string; readonly doc?: string }[];
  /** The value, reading the inputs' elements by their names (`{ op: "input", name: "x", index: [] }`). */
  readonly expr: unknown;
}

/**
 * Declares an elementwise op by its expression alone: the shape rule (inputs of one shape), in-place use, the gradient
 * of every input (derived) and its kernels on every executor (the "pointwise" kernel) follow from it.
 */
export function definePointwiseOp(spec: PointwiseOpSpec): OpDef<Record<string, never>> {
  const names = spec.inputs.map((i) => i.name);
  if (names.length === 0 || names.length > POINTWISE_SLOTS.length) {
    throw new GraphValidationError(
      `op ${spec.kind}`,
      "an elementwise op takes 1 to 4 inputs",
      `1 to ${POINTWISE_SLOTS.length}`,
      String(names.length),
    );
  }
  const own = checkPointwise(spec.expr, `op ${spec.kind}: expr`, names);
  const slots = renameReads(own, new Map(names.map((n, i) => [n, POINTWISE_SLOTS[i]!])));
  const expr = checkPointwise(slots, `op ${spec.kind}: expr`, POINTWISE_SLOTS.slice(0, names.length));
  return defineOp<Record<string, never>>({
    kind: spec.kind,
    doc: spec.doc,
    inputs: spec.inputs.map((i) => ({ name: i.name, ...(i.doc === undefined ? {} : { doc: i.doc }) })),
    attrs: {},
    inPlace: 0,
    inferShape: (inputs, _attrs, ctx) => sameShapes(names, inputs, ctx),
    vjp: (ctx) => pointwiseVjp(ctx, expr, spec.kind),
    pointwise: () => expr,
  });
}

/**
 * A pointwise kernel call's checks, shared by every executor: each present input has x0's shape (a ShapeError naming
 * `<node>.x<i>`), and the `expr` attribute is an elementwise expression over the present inputs (checked once per
 * attribute object). Returns the checked expression.
 */
export function pointwiseCallExpr(call: CallInfo, inputs: readonly (Shaped | undefined)[]): Expr {
  const x0 = inputs[0]!;
  inputs.forEach((t, i) => {
    if (t !== undefined && i > 0) expectSameShape(call, POINTWISE_SLOTS[i]!, x0, t);
  });
  const present = POINTWISE_SLOTS.filter((_, i) => inputs[i] !== undefined);
  return pointwiseExprOf(call.attrs["expr"], `${call.node}.expr`, present);
}
