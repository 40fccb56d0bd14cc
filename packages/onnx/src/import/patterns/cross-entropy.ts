// Cross-entropy as exportOnnx writes attngraph's cross-entropy node (ops/cross-entropy.ts): the row max M =
// ReduceMax(logits), lse = Log(ReduceSum(Exp(logits − M))) + M, the target's logit GatherElements(logits, targets),
// lse − picked per position (0 where the target is ignoreIndex), then the mean, the sum, or the mean over the counted
// positions (ReduceSum / Max(count, 1)). → cross-entropy { ignoreIndex, reduction }. ONNX's own
// SoftmaxCrossEntropyLoss (what torch.onnx.export writes for F.cross_entropy) is built in lower-cross-entropy.ts.
import type { GraphIndex } from "../graph-index.js";
import { attrInt } from "../node-args.js";
import type { NodeIn } from "../read-model.js";
import { feeding, onlyReader, reducesLastAxis, scalarProduct, splitStatic, type Group } from "./group.js";

export function matchCrossEntropy(index: GraphIndex, gather: NodeIn): Group | undefined {
  const [logits, idx] = gather.inputs as [string, string];
  const nodes: NodeIn[] = [gather];
  const unsq = feeding(index, idx, "Unsqueeze", gather);
  if (!unsq) return undefined;
  nodes.push(unsq);
  // safe = targets, or Where(Equal(targets, ignore), 0, targets).
  let targets = unsq.inputs[0]!;
  let ignored: NodeIn | undefined;
  const safeWhere = feeding(index, targets, "Where", unsq);
  if (safeWhere) {
    const eq = index.made(safeWhere.inputs[0], "Equal");
    if (
      !eq ||
      safeWhere.inputs[2] !== eq.inputs[0] ||
      !index.isStatic(eq.inputs[1]!) ||
      !index.isStatic(safeWhere.inputs[1]!)
    )
      return undefined;
    ignored = eq;
    targets = eq.inputs[0]!;
    nodes.push(safeWhere, eq);
  }
  const picked = onlyReader(index, gather, "Squeeze");
  const diff = picked && onlyReader(index, picked, "Sub");
  if (!picked || !diff || diff.inputs[1] !== picked.outputs[0]) return undefined;
  nodes.push(picked, diff);
  // lse = Add(Log(ReduceSum(Exp(Sub(logits, M)))), Squeeze(M)).
  const add = feeding(index, diff.inputs[0], "Add", diff);
  const log = add && feeding(index, add.inputs[0], "Log", add);
  const sum = log && feeding(index, log.inputs[0], "ReduceSum", log);
  const exp = sum && feeding(index, sum.inputs[0], "Exp", sum);
  const sub = exp && feeding(index, exp.inputs[0], "Sub", exp);
  const sqMax = add && feeding(index, add.inputs[1], "Squeeze", add);
  const max = sub && index.made(sub.inputs[1], "ReduceMax");
  if (
    !add ||
    !log ||
    !sum ||
    !exp ||
    !sub ||
    !sqMax ||
    !max ||
    sub.inputs[0] !== logits ||
    max.inputs[0] !== logits ||
    sqMax.inputs[0] !== max.outputs[0]
  )
    return undefined;
  if (!index.usesOf(max.outputs[0]!).every((u) => u.node === sub || u.node === sqMax)) return undefined;
  nodes.push(add, log, sum, exp, sub, sqMax, max);
  // losses: diff, or Where(ignored, 0, diff).
  let losses = diff;
  if (ignored) {
    const w = onlyReader(index, diff, "Where");
    if (!w || w.inputs[0] !== ignored.outputs[0] || !index.isStatic(w.inputs[1]!)) return undefined;
    losses = w;
    nodes.push(w);
  }
  // The reduction.
  let reduction: "mean" | "sum" | "none" = "none";
  let terminal = losses;
  const uses = index.outputs.has(losses.outputs[0]!) ? [] : index.usesOf(losses.outputs[0]!);
  const r = uses.length === 1 ? uses[0]!.node : undefined;
  if (r?.opType === "ReduceMean" && !ignored) [reduction, terminal] = ["mean", r];
  else if (r?.opType === "ReduceSum") {
    const div = onlyReader(index, r, "Div");
    const count = div && ignored ? countOf(index, div, ignored) : undefined;
    if (div && count) {
      [reduction, terminal] = ["mean", div];
      nodes.push(r, ...count);
    } else [reduction, terminal] = ["sum", r];
  }
  if (terminal !== losses && !nodes.includes(losses)) nodes.push(losses);
  // The Equal is read by the safe Where, the losses' Where and the count only.
  if (ignored && !index.usesOf(ignored.outputs[0]!).every((u) => nodes.includes(u.node) || u.node === terminal))
    return undefined;
  const internal = [...new Set(nodes)].filter((m) => m !== terminal);
  return {
    kind: "cross-entropy",
    terminal,
    internal,
    lower: (ctx) => {
      const rank = ctx.shapeOf(logits, gather).length;
      if (
        !reducesLastAxis(ctx, max, rank) ||
        !reducesLastAxis(ctx, sum, rank) ||
        (attrInt(gather, "axis", 0) !== -1 && attrInt(gather, "axis", 0) !== rank - 1)
      )
        return false;
      const ignoreIndex = ignored ? scalarProduct(ctx, [ignored.inputs[1]!]) : undefined;
      if (ignored && (ignoreIndex === undefined || !Number.isInteger(ignoreIndex))) return false;
      ctx.addOutput(
        terminal,
        "cross-entropy",
        { logits: ctx.ref(logits, gather), targets: ctx.ref(targets, gather) },
        { ignoreIndex: ignoreIndex ?? null, reduction },
        [terminal, ...internal],
      );
      return true;
    },
  };
}

/** Div(·, Max(ReduceSum(Cast(Not(ignored))), 1)): the counted positions; its nodes, or undefined. */
function countOf(index: GraphIndex, div: NodeIn, ignored: NodeIn): NodeIn[] | undefined {
  const max = feeding(index, div.inputs[1], "Max", div);
  const m = max && splitStatic(index, max);
  const total = m && feeding(index, m.runtime, "ReduceSum", max);
  const cast = total && feeding(index, total.inputs[0], "Cast", total);
  const not = cast && feeding(index, cast.inputs[0], "Not", cast);
  return max && total && cast && not && not.inputs[0] === ignored.outputs[0] ? [max, total, cast, not] : undefined;
}
