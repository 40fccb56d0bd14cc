import type { MaskModAttrs, ScoreModAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { lowerExpr } from "./expr.js";

/**
 * score-mod: out = expr(score = scale · x, b, h, q, kv) over [B, H, L, S], the expression as plain ops (ops/expr.ts).
 * An expression that does not read the score (a bias alone) is expanded to the scores' shape.
 */
export const scoreMod: OpLowering = (l) => {
  const a = l.node.attrs as unknown as ScoreModAttrs;
  const x = l.required("x");
  let score: string | undefined;
  const scoreOf = () => (score ??= a.scale === 1 ? x : l.emit("Mul", [x, l.constant("float", [a.scale], [])]));
  const value = lowerExpr({ l, x, score: scoreOf, inputs: a.inputs }, a.expr).name;
  return score === undefined ? l.emit("Expand", [value, l.emit("Shape", [x])]) : value;
};

/** mask-mod: out = expr(b, h, q, kv) ? x : −∞ over [B, H, L, S] (ops/expr.ts). */
export const maskMod: OpLowering = (l) => {
  const a = l.node.attrs as unknown as MaskModAttrs;
  const x = l.required("x");
  const keep = lowerExpr({ l, x, inputs: a.inputs }, a.expr).name;
  return l.emit("Where", [keep, x, l.constant("float", [-Infinity], [])]);
};
