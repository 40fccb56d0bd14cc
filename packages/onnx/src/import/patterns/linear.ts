// nn.Linear as torch.onnx.export writes it: MatMul(x, Wᵀ as a [in, out] initializer) then Add(bias, ·).
import type { GraphIndex } from "../graph-index.js";
import type { NodeIn } from "../read-model.js";
import { isFloat } from "../host-tensor.js";
import { asVector, projectionWeight } from "../lower-weights.js";
import { splitStatic, type Group } from "./group.js";

export function matchLinear(index: GraphIndex, matmul: NodeIn): Group | undefined {
  const [x, w] = matmul.inputs as [string, string];
  const out = matmul.outputs[0]!;
  if (index.isStatic(x) || !index.isStatic(w) || index.outputs.has(out)) return undefined;
  const uses = index.usesOf(out);
  const add =
    uses.length === 1 && uses[0]!.node.opType === "Add" && uses[0]!.node.domain === "" ? uses[0]!.node : undefined;
  const bias = add && splitStatic(index, add);
  if (!add || !bias) return undefined;
  return {
    kind: "linear",
    terminal: add,
    internal: [matmul],
    lower: (ctx) => {
      const wt = ctx.constOf(w);
      const b = asVector(ctx.constOf(bias.constant));
      if (wt?.shape.length !== 2 || !isFloat(wt.dtype) || !b || b.shape[0] !== wt.shape[1]) return false;
      const inputs = {
        x: ctx.ref(x, matmul),
        weight: projectionWeight(ctx, w, wt),
        bias: ctx.weight(bias.constant, b),
      };
      const r = ctx.add("projection", ctx.nameFor(add, add.outputs[0]!), inputs, {}, [add, matmul]);
      ctx.setNode(add.outputs[0]!, r);
      ctx.aliases.set(out, r);
      return true;
    },
  };
}
