import { sameDim, type AddLayerNormAttrs } from "@attngraph/graph";
import { CONTRIB_DOMAIN } from "../model-writer.js";
import type { Lowering, OpLowering } from "../lowering.js";
import { layerNormalization } from "./layer-norm-math.js";

/**
 * add-layer-norm: [a + b | LayerNorm(a + b)] on the last axis. With contrib ops, onnxruntime's SkipLayerNormalization
 * computes both in one pass (its fourth output is the sum); it needs a and b of one shape, rank 3, and a weight
 * (gamma is required there). Otherwise Add then LayerNormalization.
 */
export const addLayerNorm: OpLowering = (l) => {
  const { eps } = l.node.attrs as unknown as AddLayerNormAttrs;
  const [a, b, weight, bias] = [l.required("a"), l.required("b"), l.input("weight"), l.input("bias")];
  const why = l.contrib ? whyNotSkipLayerNorm(l, weight) : undefined;
  let sum: string;
  let norm: string;
  if (l.contrib && why === undefined) {
    [norm, , , sum] = l.emitMulti(
      "SkipLayerNormalization",
      [a, b, weight!, ...(bias === undefined ? [] : [bias])],
      4,
      { epsilon: { float: eps } },
      { domain: CONTRIB_DOMAIN },
    ) as [string, string, string, string];
  } else {
    if (why !== undefined) l.plainBecause(why);
    sum = l.emit("Add", [a, b]);
    norm = layerNormalization(l, sum, weight, bias, eps);
  }
  return l.emit("Concat", [sum, norm], { axis: -1 });
};

function whyNotSkipLayerNorm(l: Lowering, weight: string | undefined): string | undefined {
  const a = l.shapeOf("a");
  const b = l.shapeOf("b");
  if (weight === undefined) return "SkipLayerNormalization needs a weight (gamma)";
  if (a.length !== 3) return `SkipLayerNormalization needs rank-3 inputs, got rank ${a.length}`;
  if (a.length !== b.length || !a.every((d, i) => sameDim(d, b[i]!)))
    return "SkipLayerNormalization needs a and b of one shape (no broadcasting)";
  return undefined;
}
