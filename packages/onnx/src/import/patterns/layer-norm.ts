// LayerNorm in its decomposed form (torch.onnx.export before opset 17, and TF/Keras exports):
// d = x − ReduceMean(x); y = d / Sqrt(ReduceMean(d²) + eps) [· gamma] [+ beta], over the last axis.
import type { GraphIndex } from "../graph-index.js";
import type { NodeIn } from "../read-model.js";
import { asVector } from "../lower-weights.js";
import { feeding, onlyReader, reducesLastAxis, near, scalarProduct, splitStatic, type Group } from "./group.js";

export function matchLayerNorm(index: GraphIndex, div: NodeIn): Group | undefined {
  const [dv, sv] = div.inputs as [string, string];
  const sub = index.made(dv, "Sub");
  const sqrt = feeding(index, sv, "Sqrt", div);
  if (!sub || !sqrt) return undefined;
  const [x, mv] = sub.inputs as [string, string];
  const mean = feeding(index, mv, "ReduceMean", sub);
  if (!mean || mean.inputs[0] !== x) return undefined;
  const addEps = feeding(index, sqrt.inputs[0], "Add", sqrt);
  const eps = addEps && splitStatic(index, addEps);
  const variance = eps && feeding(index, eps.runtime, "ReduceMean", addEps);
  if (!variance) return undefined;
  const square =
    feeding(index, variance.inputs[0], "Pow", variance) ?? feeding(index, variance.inputs[0], "Mul", variance);
  if (!square || square.inputs[0] !== dv || (square.opType === "Mul" && square.inputs[1] !== dv)) return undefined;
  // d is read by the square and the division only.
  if (index.outputs.has(dv) || !index.usesOf(dv).every((u) => u.node === square || u.node === div)) return undefined;
  // Optional affine: · gamma, then + beta, each a static operand read by nothing else.
  let last = div;
  const gammaNode = onlyReader(index, div, "Mul");
  const gamma = gammaNode && splitStatic(index, gammaNode);
  if (gammaNode && gamma) last = gammaNode;
  const betaNode = onlyReader(index, last, "Add");
  const beta = betaNode && splitStatic(index, betaNode);
  if (betaNode && beta) last = betaNode;
  const nodes = [
    mean,
    sub,
    square,
    variance,
    addEps,
    sqrt,
    div,
    ...(last !== div ? [gammaNode!] : []),
    ...(last === betaNode ? [betaNode] : []),
  ].filter((n, i, a) => a.indexOf(n) === i);
  return {
    kind: "layer-norm",
    terminal: last,
    internal: nodes.filter((n) => n !== last),
    lower: (ctx) => {
      const rank = ctx.shapeOf(x, div).length;
      if (!reducesLastAxis(ctx, mean, rank, true) || !reducesLastAxis(ctx, variance, rank, true)) return false;
      if (square.opType === "Pow" && !near(scalarProduct(ctx, [square.inputs[1]!]), 2)) return false;
      const e = scalarProduct(ctx, [eps.constant]);
      if (e === undefined || !(e > 0)) return false;
      const w = gamma && last !== div ? asVector(ctx.constOf(gamma.constant)) : undefined;
      const b = beta && last === betaNode ? asVector(ctx.constOf(beta.constant)) : undefined;
      if ((gamma && last !== div && !w) || (beta && last === betaNode && !b)) return false;
      const inputs = {
        x: ctx.ref(x, div),
        weight: w && ctx.weight(`${gamma!.constant}`, w),
        bias: b && ctx.weight(`${beta!.constant}`, b),
      };
      ctx.addOutput(
        last,
        "layer-norm",
        inputs,
        { eps: e },
        [last, ...nodes.filter((n) => n !== last)],
        "decomposed LayerNorm (ReduceMean, Sub, Pow, Sqrt, Div)",
      );
      return true;
    },
  };
}

/** The one node of `opType` reading `n`'s output, when nothing else reads it. */
