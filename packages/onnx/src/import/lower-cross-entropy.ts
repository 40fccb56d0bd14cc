// Lowering of ONNX's SoftmaxCrossEntropyLoss to attngraph's cross-entropy.
import type { LowerContext } from "./lower-context.js";
import type { NodeIn } from "./read-model.js";

/**
 * ONNX's SoftmaxCrossEntropyLoss (torch's F.cross_entropy): scores [N, C] or [N, C, d…] (classes on axis 1, moved
 * last), labels [N] / [N, d…], reduction mean (over the positions not ignored), sum or none, ignore_index.
 */
export function softmaxCrossEntropy(ctx: LowerContext, n: NodeIn): void {
  if (n.inputs[2]) ctx.unsupported(n, "SoftmaxCrossEntropyLoss with class weights");
  if (n.outputs[1] && (ctx.index.usesOf(n.outputs[1]).length > 0 || ctx.index.outputs.has(n.outputs[1])))
    ctx.unsupported(n, "SoftmaxCrossEntropyLoss whose log_prob output is read");
  const reduction = n.attrs.get("reduction")?.s ?? "mean";
  if (reduction !== "mean" && reduction !== "sum" && reduction !== "none")
    ctx.fail(n, "an unknown reduction", "mean, sum or none", reduction);
  const shape = ctx.shapeOf(n.inputs[0]!, n);
  let logits = ctx.ref(n.inputs[0]!, n);
  if (shape.length > 2) {
    const perm = [0, ...shape.slice(2).map((_, i) => i + 2), 1];
    logits = ctx.add("transpose", ctx.nameFor(n, n.outputs[0]!, ".classes-last"), { x: logits }, { perm }, [n]);
  }
  const ignore = n.attrs.get("ignore_index")?.i;
  // Targets reshaped in the file (nanoGPT's targets.view(-1)): the original targets, the logits viewed to match.
  const labels = ctx.val(n.inputs[1]!, n);
  let targets: string;
  if (labels.kind === "node" && labels.view) {
    targets = labels.view.ref;
    const classes = ctx.b.shapeOf(logits)[ctx.b.shapeOf(logits).length - 1] as number;
    logits = ctx.add(
      "reshape",
      ctx.nameFor(n, n.outputs[0]!, ".logits"),
      { x: logits },
      { shape: [...labels.view.shape, classes] },
      [n],
    );
  } else targets = ctx.ref(n.inputs[1]!, n);
  const r = ctx.add(
    "cross-entropy",
    ctx.nameFor(n, n.outputs[0]!),
    { logits, targets },
    { ignoreIndex: ignore ?? null, reduction },
    [n],
  );
  ctx.setNode(n.outputs[0]!, r);
}
