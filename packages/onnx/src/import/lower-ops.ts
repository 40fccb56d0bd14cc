// One ONNX node at a time → attngraph nodes, for nodes that no pattern (patterns/*.ts) took and that are not static
// (static ones are folded on the host, fold.ts). Each case either builds the node's exact meaning or stops with an
// "unsupported: …" OnnxImportError naming the node and the form it came in.
import type { Ref } from "@attngraph/graph";
import { reshapeTarget, squeezeShape, unsqueezeShape } from "./host-shape-ops.js";
import { hostTensor, sizeOf } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import { lowerContribAttention } from "./contrib-attention.js";
import { softmaxCrossEntropy } from "./lower-cross-entropy.js";
import { layerNorm, skipLayerNorm } from "./lower-layer-norm.js";
import { gemm, matMul } from "./lower-matmul.js";
import { gatherNode, sliceNode, split } from "./lower-slicing.js";
import { scaled } from "./lower-weights.js";
import { attrInt, attrInts, normAxis } from "./node-args.js";
import { tryPointwise } from "./pointwise.js";
import type { NodeIn } from "./read-model.js";

/** The op types (by lowerNode's key) whose lowering is a function of its own; the others are lowerNode's cases. */
const OWN_LOWERING = new Map<string, (ctx: LowerContext, n: NodeIn) => void>([
  ["Gather", gatherNode],
  ["MatMul", matMul],
  ["Gemm", gemm],
  ["LayerNormalization", layerNorm],
  ["ms.SkipLayerNormalization", skipLayerNorm],
  ["SoftmaxCrossEntropyLoss", softmaxCrossEntropy],
  ["ms.Attention", lowerContribAttention],
  ["ms.MultiHeadAttention", lowerContribAttention],
  ["Split", split],
  ["Slice", sliceNode],
]);

export function lowerNode(ctx: LowerContext, n: NodeIn): void {
  if (tryPointwise(ctx, n)) return;
  const out = n.outputs[0]!;
  const name = () => ctx.nameFor(n, out);
  const c = (i: number) => ctx.constOf(n.inputs[i]);
  const ref = (i: number) => ctx.ref(n.inputs[i]!, n);
  const set = (r: Ref) => ctx.setNode(out, r);
  const key =
    n.domain === "com.microsoft"
      ? `ms.${n.opType}`
      : n.domain === "" || n.domain === "ai.onnx"
        ? n.opType
        : `${n.domain}.${n.opType}`;
  const own = OWN_LOWERING.get(key);
  if (own) return own(ctx, n);
  switch (key) {
    case "Identity":
    case "Dropout": {
      if (n.outputs.slice(1).some((o) => o && ctx.index.usesOf(o).length > 0))
        ctx.unsupported(n, "a Dropout whose mask output is read");
      ctx.env.set(out, ctx.val(n.inputs[0]!, n));
      return;
    }
    case "Add":
    case "Mul": {
      const [a, b] = orderNodeFirst(ctx, n);
      return set(ctx.add(n.opType === "Add" ? "add" : "mul", name(), { a: ctx.ref(a, n), b: ctx.ref(b, n) }, {}, [n]));
    }
    case "Sub": {
      const k = c(1);
      if (!k) ctx.unsupported(n, "Sub of a runtime value (only `x - constant` is built, as x + (−constant))");
      return set(ctx.add("add", name(), { a: ref(0), b: ctx.weight(`${n.name}.negated`, scaled(k, -1)) }, {}, [n]));
    }
    case "Div": {
      const k = c(1);
      if (!k) ctx.unsupported(n, "Div by a runtime value (only `x / constant` is built, as x · (1/constant))");
      return set(
        ctx.add(
          "mul",
          name(),
          {
            a: ref(0),
            b: ctx.weight(`${n.name}.reciprocal`, {
              ...k,
              dtype: "float32",
              data: Float32Array.from(k.data, (v) => 1 / v),
            }),
          },
          {},
          [n],
        ),
      );
    }
    case "Neg":
      return set(
        ctx.add(
          "mul",
          name(),
          { a: ref(0), b: ctx.weight(`${n.name}.minus-one`, hostTensor("float32", [1], [-1])) },
          {},
          [n],
        ),
      );
    case "Relu":
      return set(ctx.add("relu", name(), { x: ref(0) }, {}, [n]));
    case "Gelu":
    case "ms.Gelu":
      return set(
        ctx.add(
          "gelu",
          name(),
          { x: ref(0) },
          { approximate: n.attrs.get("approximate")?.s === "tanh" ? "tanh" : "none" },
          [n],
        ),
      );
    case "ms.FastGelu":
    case "ms.BiasGelu": {
      const x = n.inputs[1] ? ctx.add("add", ctx.nameFor(n, out, ".bias"), { a: ref(0), b: ref(1) }, {}, [n]) : ref(0);
      return set(ctx.add("gelu", name(), { x }, { approximate: n.opType === "FastGelu" ? "tanh" : "none" }, [n]));
    }
    case "Softmax": {
      const rank = ctx.shapeOf(n.inputs[0]!, n).length;
      const axis = normAxis(n, attrInt(n, "axis", -1), rank);
      if (axis !== rank - 1)
        ctx.unsupported(
          n,
          `Softmax over axis ${axis} of a rank-${rank} value (attngraph's softmax is over the last axis)`,
        );
      return set(ctx.add("softmax", name(), { x: ref(0) }, { scale: 1 }, [n]));
    }
    case "Reshape": {
      const target = c(1);
      if (!target) ctx.unsupported(n, "Reshape to a shape known only at run time");
      const shape = reshapeTarget(
        n,
        ctx.shapeOf(n.inputs[0]!, n),
        Array.from(target.data),
        attrInt(n, "allowzero", 0) === 1,
      );
      const v = ctx.val(n.inputs[0]!, n);
      if (v.kind === "node" && v.dtype === "int32")
        return void ctx.env.set(out, { ...v, shape, view: v.view ?? { ref: v.ref, shape: v.shape } });
      return set(ctx.add("reshape", name(), { x: ref(0) }, { shape }, [n]));
    }
    case "Unsqueeze":
    case "Squeeze": {
      const inShape = ctx.shapeOf(n.inputs[0]!, n);
      const axes = c(1) ? Array.from(c(1)!.data) : attrInts(n, "axes");
      const shape =
        n.opType === "Unsqueeze"
          ? unsqueezeShape(
              n,
              inShape,
              axes ?? ctx.fail(n, "Unsqueeze without axes", "an axes input or attribute", "none"),
            )
          : squeezeShape(n, inShape, axes);
      return set(ctx.add("reshape", name(), { x: ref(0) }, { shape }, [n]));
    }
    case "Flatten": {
      const inShape = ctx.shapeOf(n.inputs[0]!, n);
      const axis = attrInt(n, "axis", 1);
      const a = axis < 0 ? axis + inShape.length : axis;
      return set(
        ctx.add("reshape", name(), { x: ref(0) }, { shape: [sizeOf(inShape.slice(0, a)), sizeOf(inShape.slice(a))] }, [
          n,
        ]),
      );
    }
    case "Transpose": {
      const rank = ctx.shapeOf(n.inputs[0]!, n).length;
      const perm = attrInts(n, "perm") ?? Array.from({ length: rank }, (_, i) => rank - 1 - i);
      return set(ctx.add("transpose", name(), { x: ref(0) }, { perm: [...perm] }, [n]));
    }
    case "Cast": {
      const v = ctx.val(n.inputs[0]!, n);
      const to = attrInt(n, "to");
      const toFloat = to === 1 || to === 10 || to === 11;
      const toInt = to === 6 || to === 7;
      if (v.kind === "node" && ((toFloat && v.dtype === "float32") || (toInt && v.dtype === "int32")))
        return void ctx.env.set(out, v);
      return ctx.unsupported(
        n,
        `Cast of a runtime ${v.kind === "node" ? v.dtype : "value"} to type ${to} (only casts that keep a float a float, or an integer an integer, are built)`,
      );
    }
    case "Expand": {
      const target = c(1);
      const inShape = ctx.shapeOf(n.inputs[0]!, n);
      if (target && sizeOf(Array.from(target.data)) <= 1) return void ctx.env.set(out, ctx.val(n.inputs[0]!, n));
      if (
        target &&
        target.data.length <= inShape.length &&
        Array.from(target.data).every((d, i) => d === 1 || d === inShape[inShape.length - target.data.length + i])
      )
        return void ctx.env.set(out, ctx.val(n.inputs[0]!, n));
      return ctx.unsupported(n, "Expand of a runtime value to a larger shape");
    }
    default:
      return ctx.unsupported(
        n,
        `${n.opType} of a runtime value outside the patterns the importer recognises (GELU, SiLU, LayerNorm, attention)`,
      );
  }
}

/** Add and Mul commute: the runtime operand goes first, so that a constant broadcasts onto it. */
function orderNodeFirst(ctx: LowerContext, n: NodeIn): [string, string] {
  const [a, b] = n.inputs as [string, string];
  const sa = ctx.shapeOf(a, n);
  const sb = ctx.shapeOf(b, n);
  return ctx.constOf(a) || sa.length < sb.length || (sa.length === sb.length && sizeOf(sa) < sizeOf(sb))
    ? [b, a]
    : [a, b];
}
