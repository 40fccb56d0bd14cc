// GELU in plain ops, in the cpu kernel's two forms, and the onnxruntime contrib op for each (com.microsoft Gelu is
// the exact erf form, FastGelu the tanh approximation with the same constants; both take the bias of a preceding
// linear layer in one pass, BiasGelu and FastGelu's optional bias input).
import type { GeluAttrs } from "@attngraph/graph";
import type { Lowering } from "../lowering.js";
import { CONTRIB_DOMAIN } from "../model-writer.js";

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** gelu(x (+ bias)) elementwise; contrib ops when the lowering allows them. */
export function gelu(l: Lowering, x: string, bias: string | undefined, approximate: GeluAttrs["approximate"]): string {
  if (l.contrib) {
    if (approximate === "tanh")
      return l.emit("FastGelu", [x, ...(bias === undefined ? [] : [bias])], {}, { domain: CONTRIB_DOMAIN });
    return bias === undefined
      ? l.emit("Gelu", [x], {}, { domain: CONTRIB_DOMAIN })
      : l.emit("BiasGelu", [x, bias], {}, { domain: CONTRIB_DOMAIN });
  }
  const pre = bias === undefined ? x : l.emit("Add", [x, bias]);
  return approximate === "tanh" ? tanhGelu(l, pre) : erfGelu(l, pre);
}

/** 0.5 · x · (1 + erf(x / √2)). */
function erfGelu(l: Lowering, x: string): string {
  const erf = l.emit("Erf", [l.emit("Mul", [x, l.constant("float", [Math.SQRT1_2], [])])]);
  return halfTimes(l, x, erf);
}

/** 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 x³))). */
function tanhGelu(l: Lowering, x: string): string {
  const cube = l.emit("Mul", [l.emit("Mul", [x, x]), x]);
  const inner = l.emit("Add", [x, l.emit("Mul", [cube, l.constant("float", [0.044715], [])])]);
  const t = l.emit("Tanh", [l.emit("Mul", [inner, l.constant("float", [SQRT_2_OVER_PI], [])])]);
  return halfTimes(l, x, t);
}

/** 0.5 · x · (1 + f). */
function halfTimes(l: Lowering, x: string, f: string): string {
  const onePlus = l.emit("Add", [f, l.constant("float", [1], [])]);
  return l.emit("Mul", [l.emit("Mul", [x, l.constant("float", [0.5], [])]), onePlus]);
}
