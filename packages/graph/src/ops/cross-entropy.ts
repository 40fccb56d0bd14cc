import { formatDims, type SymShape } from "../dims.js";
import { defineOp, type OpContext } from "../op-def.js";
import { expectDim } from "./shape-checks.js";

export interface CrossEntropyAttrs {
  /** A target equal to this is skipped: no loss, not counted in the mean. null = none (PyTorch's default is −100). */
  readonly ignoreIndex: number | null;
  /** "mean" over counted positions (PyTorch's default), "sum", or "none" (one loss per position, shaped like targets). */
  readonly reduction: "mean" | "sum" | "none";
}

/**
 * Cross-entropy of logits against integer class targets, PyTorch `F.cross_entropy`: per position
 * `logsumexp(logits) − logits[target]`, computed stably (the row max is subtracted before exp). logits [..., V] (e.g.
 * [N, V] or [B, T, V]), targets [...] int32 in [0, V) (or ignoreIndex) → [] for "mean"/"sum", [...] for "none".
 * A target outside [0, V) is an error naming the node, the position and the value. A mean over no counted position
 * (every target ignored) is 0, where PyTorch gives nan: there is nothing to average, and a NaN loss would poison a
 * training step.
 */
export const crossEntropyOp = defineOp<CrossEntropyAttrs>({
  kind: "cross-entropy",
  doc: "Cross-entropy of logits [..., V] against int32 targets [...] (F.cross_entropy): mean, sum or per position; stable.",
  inputs: [
    { name: "logits", doc: "[..., V]" },
    { name: "targets", dtype: "int32", doc: "[...] int32 class ids in [0, V), or ignoreIndex" },
  ],
  attrs: {
    ignoreIndex: {
      type: "integer",
      nullable: true,
      min: -(2 ** 31),
      max: 2 ** 31 - 1,
      doc: "a target to skip (PyTorch's default -100); null = none",
    },
    reduction: { type: "string", default: "mean", oneOf: ["mean", "sum", "none"] },
  },
  inferShape: ([logits, targets], { reduction }, ctx) => {
    expectLogitsAndTargets(logits!, targets!, ctx);
    return reduction === "none" ? [...targets!] : [];
  },
  // The loss node of a training graph: its gradient may be the implicit 1 (`grad` absent). Targets get none.
  vjp: (ctx) => {
    const [logits, targets] = ctx.inputs;
    return [ctx.addGrad(0, "cross-entropy-grad", { logits, targets, grad: ctx.grad }, { ...ctx.attrs }), undefined];
  },
});

/** logits [..., V] of rank >= 2 and targets [...] their shape without the class axis: cross-entropy's and its grad's. */
export function expectLogitsAndTargets(l: SymShape, t: SymShape, ctx: OpContext): void {
  if (l.length < 2)
    ctx.fail(
      "logits",
      "cross-entropy needs logits with a class axis and at least one position axis",
      "[..., V] of rank >= 2",
      formatDims(l),
    );
  if (t.length !== l.length - 1)
    ctx.fail(
      "targets",
      "targets must have the logits' shape without the class axis",
      formatDims(l.slice(0, -1)),
      formatDims(t),
    );
  t.forEach((d, i) => expectDim(ctx, "targets", `targets dim ${i} must match the logits`, l[i]!, d, t));
}
