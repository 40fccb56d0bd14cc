// GELU as torch.onnx.export writes it before opset 20: the exact form x · 0.5 · (1 + erf(x / √2)) and the tanh form
// 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))) (Hugging Face's gelu_new, nanoGPT-style NewGELU), in any
// order of the products; SiLU as x · sigmoid(x).
import type { GraphIndex } from "../graph-index.js";
import type { LowerContext } from "../lower-context.js";
import type { NodeIn } from "../read-model.js";
import { factorsOf, feeding, near, scalarProduct, splitStatic, type Group } from "./group.js";

const SQRT2 = Math.SQRT2;
const TANH_K = Math.sqrt(2 / Math.PI);

export function matchGelu(index: GraphIndex, t: NodeIn): Group | undefined {
  const f = factorsOf(index, t.inputs, t);
  if (f.runtime.length !== 2) return undefined;
  for (const [x, other] of [f.runtime, [...f.runtime].reverse()] as [string, string][]) {
    const add = feeding(index, other, "Add", readerOf(index, other, t, f.nodes));
    const one = add && splitStatic(index, add);
    if (!add || !one) continue;
    const erf = feeding(index, one.runtime, "Erf", add);
    if (erf) {
      const div = feeding(index, erf.inputs[0], "Div", erf) ?? feeding(index, erf.inputs[0], "Mul", erf);
      const k = div && splitStatic(index, div);
      if (!div || !k || k.runtime !== x) continue;
      return {
        kind: "gelu",
        terminal: t,
        internal: [...f.nodes, add, erf, div],
        lower: (ctx) => {
          const kv = scalarProduct(ctx, [k.constant]);
          const scale = div.opType === "Div" ? kv : kv === undefined ? undefined : 1 / kv;
          if (
            !near(scalarProduct(ctx, f.statics), 0.5) ||
            !near(scalarProduct(ctx, [one.constant]), 1) ||
            !near(scale, SQRT2)
          )
            return false;
          return lowerGelu(ctx, t, x, "none", [t, ...f.nodes, add, erf, div], "x · 0.5 · (1 + erf(x / √2))");
        },
      };
    }
    const tanh = feeding(index, one.runtime, "Tanh", add);
    if (tanh) {
      const g = matchTanhArgument(index, tanh, x);
      if (!g) continue;
      return {
        kind: "gelu",
        terminal: t,
        internal: [...f.nodes, add, tanh, ...g.nodes],
        lower: (ctx) => {
          const cubeOk = g.pow === undefined || near(scalarProduct(ctx, [g.pow]), 3);
          if (
            !cubeOk ||
            !near(scalarProduct(ctx, f.statics), 0.5) ||
            !near(scalarProduct(ctx, [one.constant]), 1) ||
            !near(scalarProduct(ctx, g.outer), TANH_K) ||
            !near(scalarProduct(ctx, g.inner), 0.044715)
          )
            return false;
          const form = "0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))";
          return lowerGelu(ctx, t, x, "tanh", [t, ...f.nodes, add, tanh, ...g.nodes], form);
        },
      };
    }
  }
  return undefined;
}

/** One gelu node in place of the matched nodes (`form` is what the import report says it recognised). */
function lowerGelu(
  ctx: LowerContext,
  t: NodeIn,
  x: string,
  approximate: "none" | "tanh",
  nodes: readonly NodeIn[],
  form: string,
): true {
  ctx.addOutput(t, "gelu", { x: ctx.ref(x, t) }, { approximate }, nodes, form);
  return true;
}

/** The node of the product that reads `value` (the terminal or one of its flattened Muls). */
function readerOf(_index: GraphIndex, value: string, t: NodeIn, muls: readonly NodeIn[]): NodeIn {
  return [t, ...muls].find((n) => n.inputs.includes(value)) ?? t;
}

/** √(2/π) · (x + 0.044715 · x³): the statics of the outer and inner products, and Pow's exponent if a Pow makes x³. */
function matchTanhArgument(index: GraphIndex, tanh: NodeIn, x: string) {
  const outer = factorsOf(index, [tanh.inputs[0]!], tanh);
  if (outer.runtime.length !== 1) return undefined;
  const sumValue = outer.runtime[0]!;
  const sum = feeding(index, sumValue, "Add", readerOf(index, sumValue, tanh, outer.nodes));
  if (!sum?.inputs.includes(x)) return undefined;
  const cubicValue = sum.inputs[0] === x ? sum.inputs[1]! : sum.inputs[0]!;
  const inner = factorsOf(index, [cubicValue], sum);
  let pow: string | undefined;
  const nodes = [...outer.nodes, sum, ...inner.nodes];
  if (inner.runtime.length === 1) {
    const p = feeding(index, inner.runtime[0], "Pow", readerOf(index, inner.runtime[0]!, sum, inner.nodes));
    if (!p || p.inputs[0] !== x || !index.isStatic(p.inputs[1]!)) return undefined;
    pow = p.inputs[1]!;
    nodes.push(p);
  } else if (inner.runtime.length !== 3 || inner.runtime.some((v) => v !== x)) return undefined;
  return { outer: outer.statics, inner: inner.statics, pow, nodes };
}

export function matchSilu(index: GraphIndex, t: NodeIn): Group | undefined {
  const [a, b] = t.inputs;
  for (const [x, s] of [
    [a, b],
    [b, a],
  ] as [string, string][]) {
    const sig = feeding(index, s, "Sigmoid", t);
    if (sig && sig.inputs[0] === x && !index.isStatic(x)) {
      return {
        kind: "silu",
        terminal: t,
        internal: [sig],
        lower: (ctx) => {
          ctx.addOutput(t, "silu", { x: ctx.ref(x, t) }, {}, [t, sig], "x · sigmoid(x)");
          return true;
        },
      };
    }
  }
  return undefined;
}
