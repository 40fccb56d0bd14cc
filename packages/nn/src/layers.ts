// The layers a transformer block is made of, each added to a builder as graph nodes with PyTorch's state_dict names for
// its weights, so that `model.state_dict()` loads as it is (layer `ln1` has weights `ln1.weight` and `ln1.bias`, the
// MLP `mlp.0.weight` … as nn.Sequential numbers its children).
import type { GraphBuilder, Ref } from "@attngraph/graph";
import { checkOptions } from "./args.js";

/**
 * nn.LayerNorm(E): node `name` over the last axis, weights `<name>.weight` and `<name>.bias` [E] (unless !affine;
 * `bias: false` keeps the scale only, as nn.LayerNorm(E, bias=False) and nanoGPT's LayerNorm(ndim, bias=False) do).
 */
export function addLayerNorm(
  b: GraphBuilder,
  x: Ref,
  name: string,
  options: { readonly eps?: number; readonly affine?: boolean; readonly bias?: boolean } = {},
): Ref {
  checkOptions("addLayerNorm options", options, "{ eps?, affine?, bias? }");
  const shape = b.shapeOf(x);
  const e = shape[shape.length - 1]!;
  const affine = options.affine ?? true;
  const weight = affine ? b.weight(`${name}.weight`, [e]) : undefined;
  const bias = affine && (options.bias ?? true) ? b.weight(`${name}.bias`, [e]) : undefined;
  return b.add("layer-norm", name, { x, weight, bias }, { eps: options.eps ?? 1e-5 });
}

/** nn.Linear(in, out): node `name` = x · Wᵀ + b with weights `<weights>.weight` [out, in] and `<weights>.bias` [out]. */
export function addLinear(
  b: GraphBuilder,
  x: Ref,
  name: string,
  outFeatures: number,
  options: { readonly weights?: string; readonly bias?: boolean } = {},
): Ref {
  checkOptions("addLinear options", options, "{ weights?, bias? }");
  const shape = b.shapeOf(x);
  const inFeatures = shape[shape.length - 1]!;
  const w = options.weights ?? name;
  const weight = b.weight(`${w}.weight`, [outFeatures, inFeatures]);
  const bias = (options.bias ?? true) ? b.weight(`${w}.bias`, [outFeatures]) : undefined;
  return b.add("projection", name, { x, weight, bias });
}

/**
 * The MLP of a block, nn.Sequential(Linear(E, hidden), GELU(), Linear(hidden, E)) named `prefix`: nodes
 * `<prefix>.hidden`, `<prefix>.gelu` and `<prefix>` (the output), weights `<prefix>.0.*` and `<prefix>.2.*` as PyTorch
 * numbers the Sequential's children.
 */
export function addMlp(
  b: GraphBuilder,
  x: Ref,
  prefix: string,
  hidden: number,
  options: { readonly gelu?: "erf" | "tanh" } = {},
): Ref {
  checkOptions("addMlp options", options, "{ gelu? }");
  const shape = b.shapeOf(x);
  const e = shape[shape.length - 1]! as number;
  const h = addLinear(b, x, `${prefix}.hidden`, hidden, { weights: `${prefix}.0` });
  const g = b.add("gelu", `${prefix}.gelu`, { x: h }, { approximate: options.gelu === "tanh" ? "tanh" : "none" });
  return addLinear(b, g, prefix, e, { weights: `${prefix}.2` });
}
