// Softmax over the last axis after a constant scale (Mul / Div by a scalar), as exporters write it, including
// attngraph's own guard against rows of −∞: Where(IsInf(x), 0, Softmax(scale · x)) (a fully masked row gives zeros,
// not ONNX Softmax's NaN), and for a scale <= 0 the −∞ entries kept −∞ through the scaling. → softmax { scale }.
import type { GraphIndex } from "../graph-index.js";
import { attrInt, normAxis } from "../node-args.js";
import type { NodeIn } from "../read-model.js";
import { feeding, scalarProduct, splitStatic, type Group } from "./group.js";

export function matchSoftmax(index: GraphIndex, sm: NodeIn): Group | undefined {
  const scales: { node: NodeIn; value: string; divide: boolean }[] = [];
  const isInfs = new Set<NodeIn>();
  const keptInfinite: { node: NodeIn; fill: string }[] = [];
  let cur = sm.inputs[0]!;
  let by = sm;
  for (;;) {
    const mul = feeding(index, cur, "Mul", by) ?? feeding(index, cur, "Div", by);
    const ms = mul && splitStatic(index, mul);
    if (mul && ms && (mul.opType === "Mul" || mul.inputs[1] === ms.constant)) {
      scales.push({ node: mul, value: ms.constant, divide: mul.opType === "Div" });
      [cur, by] = [ms.runtime, mul];
      continue;
    }
    // Where(IsInf(x), −∞, scaled): the guard that keeps −∞ entries −∞ under a scale <= 0.
    const where = feeding(index, cur, "Where", by);
    const inf = where && index.made(where.inputs[0], "IsInf");
    if (where && inf && index.isStatic(where.inputs[1]!) && !index.isStatic(where.inputs[2]!)) {
      isInfs.add(inf);
      keptInfinite.push({ node: where, fill: where.inputs[1]! });
      [cur, by] = [where.inputs[2]!, where];
      continue;
    }
    break;
  }
  const x = cur;
  if (index.isStatic(x)) return undefined;
  // The guard after the Softmax: Where(IsInf(x), 0, softmax).
  const uses = index.usesOf(sm.outputs[0]!);
  const guard =
    !index.outputs.has(sm.outputs[0]!) && uses.length === 1 && uses[0]!.node.opType === "Where" && uses[0]!.input === 2
      ? uses[0]!.node
      : undefined;
  const guardInf = guard && index.made(guard.inputs[0], "IsInf");
  const guarded = guard && guardInf && index.isStatic(guard.inputs[1]!) ? guard : undefined;
  if (guarded) isInfs.add(guardInf!);
  for (const i of isInfs) if (i.inputs[0] !== x) return undefined;
  const terminal = guarded ?? sm;
  const internal = [
    ...scales.map((s) => s.node),
    ...keptInfinite.map((k) => k.node),
    ...isInfs,
    ...(guarded ? [sm] : []),
  ];
  // Every IsInf is read inside the group only.
  const group = new Set([terminal, ...internal]);
  for (const i of isInfs)
    if (index.outputs.has(i.outputs[0]!) || !index.usesOf(i.outputs[0]!).every((u) => group.has(u.node)))
      return undefined;
  return {
    kind: "softmax",
    terminal,
    internal,
    lower: (ctx) => {
      const rank = ctx.shapeOf(x, sm).length;
      if (normAxis(sm, attrInt(sm, "axis", -1), rank) !== rank - 1) return false;
      let scale = 1;
      for (const s of scales) {
        const k = scalarProduct(ctx, [s.value]);
        if (k === undefined || !Number.isFinite(k) || (s.divide && k === 0)) return false;
        scale *= s.divide ? 1 / k : k;
      }
      if (keptInfinite.some((k) => scalarProduct(ctx, [k.fill]) !== -Infinity)) return false;
      if (guarded && scalarProduct(ctx, [guarded.inputs[1]!]) !== 0) return false;
      // Without the guard a scale <= 0 would turn −∞ into NaN or +∞ in ONNX; attngraph gives such entries weight 0.
      if (!guarded && keptInfinite.length === 0 && scale <= 0) return false;
      const note = guarded ? "Softmax guarded against rows of −∞ (IsInf, Where)" : undefined;
      const r = ctx.addOutput(terminal, "softmax", { x: ctx.ref(x, sm) }, { scale }, [terminal, ...internal], note);
      if (!ctx.aliases.has(sm.outputs[0]!)) ctx.aliases.set(sm.outputs[0]!, r);
      return true;
    },
  };
}
