// Lowering of ONNX's LayerNormalization and onnxruntime's SkipLayerNormalization to attngraph's layer-norm.
import type { LowerContext } from "./lower-context.js";
import { attrFloat, attrInt, normAxis } from "./node-args.js";
import type { NodeIn } from "./read-model.js";

export function layerNorm(ctx: LowerContext, n: NodeIn): void {
  const rank = ctx.shapeOf(n.inputs[0]!, n).length;
  if (normAxis(n, attrInt(n, "axis", -1), rank) !== rank - 1)
    ctx.unsupported(n, "LayerNormalization over more than the last axis");
  if (n.outputs.slice(1).some((o) => o && ctx.index.usesOf(o).length > 0))
    ctx.unsupported(n, "LayerNormalization whose Mean or InvStdDev output is read");
  const weight = n.inputs[1] ? ctx.ref(n.inputs[1], n) : undefined;
  const bias = n.inputs[2] ? ctx.ref(n.inputs[2], n) : undefined;
  ctx.addOutput(
    n,
    "layer-norm",
    { x: ctx.ref(n.inputs[0]!, n), weight, bias },
    { eps: attrFloat(n, "epsilon", 1e-5) },
    [n],
  );
}

/** onnxruntime's SkipLayerNormalization: LayerNorm(input + skip (+ bias)); output 3 is the sum. */
export function skipLayerNorm(ctx: LowerContext, n: NodeIn): void {
  if (n.outputs.slice(1, 3).some((o) => o && ctx.index.usesOf(o).length > 0))
    ctx.unsupported(n, "SkipLayerNormalization whose mean or inv_std_var output is read");
  let sum = ctx.add(
    "add",
    ctx.nameFor(n, n.outputs[0]!, ".sum"),
    { a: ctx.ref(n.inputs[0]!, n), b: ctx.ref(n.inputs[1]!, n) },
    {},
    [n],
  );
  if (n.inputs[4])
    sum = ctx.add("add", ctx.nameFor(n, n.outputs[0]!, ".sum.bias"), { a: sum, b: ctx.ref(n.inputs[4], n) }, {}, [n]);
  const normed = ctx.add(
    "layer-norm",
    ctx.nameFor(n, n.outputs[0]!),
    { x: sum, weight: ctx.ref(n.inputs[2]!, n), bias: n.inputs[3] ? ctx.ref(n.inputs[3], n) : undefined },
    { eps: attrFloat(n, "epsilon", 1e-12) },
    [n],
  );
  ctx.setNode(n.outputs[0]!, normed);
  if (n.outputs[3]) ctx.setNode(n.outputs[3], sum);
}
