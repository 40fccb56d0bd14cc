// The kernel checks of the backward ops (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, the layer norms' and
// gelu's gradients, cross-entropy-grad): shapes and attributes, each error naming `<node>.<field>` (see kernel-checks.ts).
import { ShapeError, formatShape, sameShape, type Shape } from "@attngraph/tensor";
import type { CrossEntropyAttrs } from "./ops/cross-entropy.js";
import type { PadAttrs } from "./ops/pad.js";
import { type CallInfo, type Shaped, attrError, expectDim } from "./kernel-checks.js";

// ---- backward ops (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, layer-norm(-weight)-grad, gelu-grad,
// embedding-grad, cross-entropy-grad) ----

/** `got` must have exactly `expected`'s shape (the paired operands of a backward or optimizer op): names `<node>.<name>`. */
export function expectSameShape(call: CallInfo, name: string, expected: Shaped, got: Shaped): void {
  if (!sameShape(expected.shape, got.shape))
    throw new ShapeError(
      `${call.node}.${name}`,
      "shape must match",
      formatShape(expected.shape),
      formatShape(got.shape),
    );
}

/** A row op's input needs a last axis: a scalar is a shape error naming `<node>.<name>`; `legend` e.g. "[..., E]". */
export function expectAxis(call: CallInfo, name: string, t: Shaped, legend = "[..., E]"): void {
  if (t.shape.length < 1)
    throw new ShapeError(
      `${call.node}.${name}`,
      `op ${call.kind} needs at least one axis`,
      legend,
      formatShape(t.shape),
    );
}

/**
 * `got` must be `lead` followed by one more axis (embedding-grad's grad after its ids' shape): else a shape error
 * naming `<node>.<name>`; `what` says which.
 */
export function expectLeadingShape(
  call: CallInfo,
  name: string,
  what: string,
  lead: readonly number[],
  got: Shaped,
): void {
  const s = got.shape;
  if (s.length !== lead.length + 1 || lead.some((d, i) => d !== s[i])) {
    throw new ShapeError(`${call.node}.${name}`, what, `${formatShape(lead)} plus one axis`, formatShape(s));
  }
}

/** An integer attribute `field` >= `min` (pad's before/after, embedding-grad's rows): an "attr" error otherwise. */
export function checkIntAttr(call: CallInfo, field: string, min: number): number {
  const v = call.attrs[field];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min)
    throw attrError(call, field, `an integer >= ${min}`, v);
  return v;
}

/**
 * pad's attributes for an input of rank `rank`: axis an integer in -rank..rank-1 (returned counted from the front,
 * 0..rank-1), before and after integers >= 0. Errors name `<node>.<field>`.
 */
export function checkPadAttrs(call: CallInfo, rank: number): PadAttrs {
  const axis = call.attrs["axis"];
  if (typeof axis !== "number" || !Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw attrError(call, "axis", rank === 0 ? "no axis: x is a scalar" : `an integer in -${rank}..${rank - 1}`, axis);
  }
  const before = checkIntAttr(call, "before", 0);
  const after = checkIntAttr(call, "after", 0);
  return { axis: axis < 0 ? axis + rank : axis, before, after };
}

/**
 * sum-to's result shape (the call's outShape): x's shape with leading axes dropped and/or dims replaced by 1, lined up
 * from the last axis; else a shape error naming `<node>.shape`.
 */
export function checkSumToShape(call: CallInfo & { readonly outShape: Shape }, x: Shaped): Shape {
  const shape = call.outShape;
  if (shape.length > x.shape.length)
    throw new ShapeError(
      `${call.node}.shape`,
      "sum-to cannot add axes",
      `rank <= ${x.shape.length}`,
      formatShape(shape),
    );
  const lead = x.shape.length - shape.length;
  shape.forEach((d, i) => {
    const xd = x.shape[lead + i]!;
    if (d !== 1 && d !== xd)
      throw new ShapeError(
        `${call.node}.shape`,
        `dim ${i} must equal x's or be 1`,
        `${xd} or 1`,
        `${d} in ${formatShape(shape)}`,
      );
  });
  return shape;
}

/** linear-weight-grad's grad [..., Out] and x [..., In]: at least one axis, and the same leading axes (naming `.grad` / `.x`). */
export function expectLinearWeightGradShapes(call: CallInfo, grad: Shaped, x: Shaped): void {
  const g = grad.shape;
  expectAxis(call, "grad", grad, "[..., Out]");
  if (x.shape.length !== g.length)
    throw new ShapeError(
      `${call.node}.x`,
      "grad and x must have the same leading axes",
      `rank ${g.length}`,
      formatShape(x.shape),
    );
  for (let i = 0; i < g.length - 1; i++)
    expectDim(call, "x", `x dim ${i} must match the gradient's`, g[i]!, x.shape[i]!, x);
}

/** Cross-entropy's (and its gradient's) logits [..., V] of rank >= 2 and targets of its shape without the class axis. */
export function expectCrossEntropyShapes(call: CallInfo, logits: Shaped, targets: Shaped): void {
  const l = logits.shape;
  if (l.length < 2)
    throw new ShapeError(
      `${call.node}.logits`,
      "cross-entropy needs logits with a class axis and at least one position axis",
      "[..., V] of rank >= 2",
      formatShape(l),
    );
  if (targets.shape.length !== l.length - 1) {
    throw new ShapeError(
      `${call.node}.targets`,
      "targets must have the logits' shape without the class axis",
      formatShape(l.slice(0, -1)),
      formatShape(targets.shape),
    );
  }
  targets.shape.forEach((d, i) =>
    expectDim(call, "targets", `targets dim ${i} must match the logits`, l[i]!, d, targets),
  );
}

/** cross-entropy-grad's loss gradient: the loss's shape, [] for "mean"/"sum", the targets' for "none" (naming `.grad`). */
export function expectLossGradShape(
  call: CallInfo,
  grad: Shaped,
  targets: Shaped,
  reduction: CrossEntropyAttrs["reduction"],
): void {
  const want = reduction === "none" ? targets.shape : [];
  if (grad.shape.length !== want.length)
    throw new ShapeError(
      `${call.node}.grad`,
      "the loss gradient must have the loss's shape",
      formatShape(want),
      formatShape(grad.shape),
    );
  want.forEach((d, i) => expectDim(call, "grad", `grad dim ${i} must match the targets`, d, grad.shape[i]!, grad));
}
