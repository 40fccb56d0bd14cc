// The L2 weight decay the optimizer updates fold into the gradient, g + weightDecay · param (torch.optim's
// weight_decay): adam-moment, sgd-momentum and sgd-step. The term is added only when it applies (weightDecay > 0 and a
// param), as torch's `if weight_decay != 0`, so an infinite param with no decay never turns a gradient into NaN.
import type { Params } from "./shared.wgsl.js";

/** Params: weightDecay (f32), then whether the term applies; returns the first word's position. */
export function packWeightDecay(p: Params, weightDecay: number, applies: boolean): number {
  const at = p.f32(weightDecay);
  p.u32(applies ? 1 : 0);
  return at;
}

/** WGSL: adds weightDecay · `param` (an f32 expression) to the variable `g` when packWeightDecay said it applies. */
export function weightDecayWgsl(at: number, g: string, param: string): string {
  return `if (pu(${at + 1}u) != 0u) { ${g} = ${g} + pf(${at}u) * ${param}; }`;
}
