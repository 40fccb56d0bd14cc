// One ONNX node at a time → attngraph nodes, for nodes that no pattern (patterns/*.ts) took and that are not static
// (static ones are folded on the host, fold.ts). Each case either builds the node's exact meaning or stops with an
// "unsupported: …" OnnxImportError naming the node and the form it came in.
import type { Ref } from "@attngraph/graph";
import {
  attrFloat,
  attrInt,
  attrInts,
  gather,
  normAxis,
  reshapeTarget,
  sliceSpec,
  splitSizes,
  squeezeShape,
  unsqueezeShape,
} from "./host-ops.js";
import { formatShape, hostTensor, isFloat, sizeOf, type HostTensor } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import { lowerContribAttention } from "./contrib-attention.js";
import { gatherLeaf, tryPointwise } from "./pointwise.js";
import type { NodeIn } from "./read-model.js";

/** `t` as a [out, in] weight for a projection, from ONNX's [in, out] MatMul right-hand side (scaled by `alpha`). */
export function transposed(t: HostTensor, alpha = 1): HostTensor {
  const [rows, cols] = t.shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = t.data[r * cols + c]! * alpha;
  return { dtype: "float32", shape: [cols, rows], data: out };
}

function scaled(t: HostTensor, k: number): HostTensor {
  return { dtype: t.dtype, shape: t.shape, data: t.data.map((v) => v * k) as typeof t.data };
}

/**
 * The [out, in] weight of x · W for W the static value `w` ([in, out]): an initializer that a Transpose made `w` from
 * (nn.Linear's layout, as exportOnnx and some exporters write it) is used as it is, under its own name, so that the
 * imported graph's weights keep the file's names; any other `w` is transposed into `<w>.T`.
 */
export function projectionWeight(ctx: LowerContext, w: string, t: HostTensor, alpha = 1): string {
  const p = ctx.index.producer.get(w);
  const perm = p && attrInts(p, "perm");
  const source =
    p?.opType === "Transpose" && (perm === undefined || perm.join() === "1,0")
      ? ctx.index.model.initializers.get(p.inputs[0] ?? "")
      : undefined;
  if (source && alpha === 1) return ctx.weight(p!.inputs[0]!, source);
  return ctx.weight(`${w}.T`, transposed(t, alpha));
}

/** A constant's values as a vector along the last axis (leading dims all 1), or undefined. */
export function asVector(t: HostTensor | undefined): HostTensor | undefined {
  if (!t || t.shape.length === 0 || t.shape.slice(0, -1).some((d) => d !== 1)) return undefined;
  return { dtype: t.dtype, shape: [t.shape[t.shape.length - 1]!], data: t.data };
}

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

function gatherNode(ctx: LowerContext, n: NodeIn): void {
  const out = n.outputs[0]!;
  const data = ctx.val(n.inputs[0]!, n);
  const idx = ctx.val(n.inputs[1]!, n);
  const dataShape = ctx.shapeOf(n.inputs[0]!, n);
  const axis = normAxis(n, attrInt(n, "axis", 0), dataShape.length);
  if (idx.kind === "node") {
    if (data.kind !== "const" || axis !== 0 || dataShape.length !== 2 || idx.dtype !== "int32")
      ctx.unsupported(n, "Gather by runtime indices other than token ids into a [V, E] table");
    const rows = ctx.add(
      "embedding",
      ctx.nameFor(n, out, idx.view ? ".rows" : ""),
      { ids: idx.view?.ref ?? idx.ref, weight: ctx.weight(n.inputs[0]!, data.t) },
      {},
      [n],
    );
    // Ids reshaped in the file: the rows come in the ids' own shape, then take the file's.
    return ctx.setNode(
      out,
      idx.view
        ? ctx.add("reshape", ctx.nameFor(n, out), { x: rows }, { shape: [...idx.shape, dataShape[1]!] }, [n])
        : rows,
    );
  }
  const indices = Array.from(idx.t.data, (v) => (v < 0 ? v + dataShape[axis]! : v));
  const bad = indices.findIndex((v) => !Number.isInteger(v) || v < 0 || v >= dataShape[axis]!);
  if (bad >= 0)
    ctx.fail(
      n,
      `index ${idx.t.data[bad]} is out of range for axis ${axis}`,
      `-${dataShape[axis]} … ${dataShape[axis]! - 1}`,
      String(idx.t.data[bad]),
    );
  const contiguous =
    idx.t.shape.length <= 1 &&
    indices.length > 0 &&
    indices.every((v, i) => v === indices[0]! + i) &&
    indices[0]! >= 0 &&
    indices[indices.length - 1]! < dataShape[axis]!;
  if (!contiguous) {
    if (data.kind === "const") return void ctx.env.set(out, { kind: "const", t: gather(n, data.t, idx.t, axis) });
    // A runtime table read at positions (a score modification's gathered read): an expression.
    if (dataShape.length === 1) return void ctx.env.set(out, gatherLeaf(ctx, n, data, idx.t));
    ctx.unsupported(n, "Gather of a runtime value of rank > 1 at indices that are not one contiguous run");
  }
  // A run of positions (a position-embedding table read at 0 … T−1, a head taken out of a value) is a slice: the
  // table stays a weight under its own name.
  let r = ctx.add(
    "slice",
    ctx.nameFor(n, out, idx.t.shape.length === 0 ? ".slice" : ""),
    { x: ctx.ref(n.inputs[0]!, n) },
    { axis, start: indices[0]!, size: indices.length },
    [n],
  );
  if (idx.t.shape.length === 0)
    r = ctx.add("reshape", ctx.nameFor(n, out), { x: r }, { shape: dataShape.filter((_, i) => i !== axis) }, [n]);
  ctx.setNode(out, r);
}

function matMul(ctx: LowerContext, n: NodeIn): void {
  const [a, b] = n.inputs as [string, string];
  const va = ctx.val(a, n);
  const wb = ctx.constOf(b);
  if (va.kind === "node" && wb && wb.shape.length === 2 && isFloat(wb.dtype)) {
    ctx.addOutput(n, "projection", { x: va.ref, weight: projectionWeight(ctx, b, wb) }, {}, [n]);
    return;
  }
  const vb = ctx.val(b, n);
  const sa = ctx.shapeOf(a, n);
  const sb = ctx.shapeOf(b, n);
  if (va.kind === "node" && vb.kind === "node" && sa.length === 4 && sb.length === 4) {
    // A batched product of two runtime values [B, H, L, K] · [B, Hkv, K, N] is what weighted-sum computes.
    ctx.addOutput(n, "weighted-sum", { weights: va.ref, v: vb.ref }, {}, [n], "a batched MatMul");
    return;
  }
  ctx.unsupported(
    n,
    `MatMul of ${va.kind === "node" ? "a runtime" : "a constant"} ${formatShape(sa)} by ${vb.kind === "node" ? "a runtime" : "a constant"} ${formatShape(sb)} (built: x · constant [in, out], and rank-4 batched products)`,
  );
}

function gemm(ctx: LowerContext, n: NodeIn): void {
  const w = ctx.constOf(n.inputs[1]);
  const bias = n.inputs[2] ? ctx.constOf(n.inputs[2]) : undefined;
  if (!w || attrInt(n, "transA", 0) !== 0 || (n.inputs[2] && !bias))
    ctx.unsupported(n, "Gemm other than x · constant weight (+ constant bias), transA 0");
  const alpha = attrFloat(n, "alpha", 1);
  const beta = attrFloat(n, "beta", 1);
  // transB 1 is nn.Linear's [out, in] already.
  const weight = attrInt(n, "transB", 0) === 1 ? scaled(w, alpha) : transposed(w, alpha);
  const vec = bias && asVector(bias);
  if (bias && (!vec || vec.shape[0] !== weight.shape[0]))
    ctx.unsupported(n, "Gemm whose C is not one bias per output", formatShape(bias.shape));
  const inputs = {
    x: ctx.ref(n.inputs[0]!, n),
    weight: ctx.weight(`${n.inputs[1]}.gemm`, weight),
    bias: vec ? ctx.weight(`${n.inputs[2]}.gemm`, scaled(vec, beta)) : undefined,
  };
  ctx.addOutput(n, "projection", inputs, {}, [n]);
}

function layerNorm(ctx: LowerContext, n: NodeIn): void {
  const rank = ctx.shapeOf(n.inputs[0]!, n).length;
  if (normAxis(n, attrInt(n, "axis", -1), rank) !== rank - 1)
    ctx.unsupported(n, "LayerNormalization over more than the last axis");
  if (n.outputs.slice(1).some((o) => o && ctx.index.usesOf(o).length > 0))
    ctx.unsupported(n, "LayerNormalization whose Mean or InvStdDev output is read");
  const weight = n.inputs[1] ? ctx.ref(n.inputs[1], n) : undefined;
  const bias = n.inputs[2] ? ctx.ref(n.inputs[2], n) : undefined;
  ctx.addOutput(
    n,
    "layer-norm",
    { x: ctx.ref(n.inputs[0]!, n), weight, bias },
    { eps: attrFloat(n, "epsilon", 1e-5) },
    [n],
  );
}

/** onnxruntime's SkipLayerNormalization: LayerNorm(input + skip (+ bias)); output 3 is the sum. */
function skipLayerNorm(ctx: LowerContext, n: NodeIn): void {
  if (n.outputs.slice(1, 3).some((o) => o && ctx.index.usesOf(o).length > 0))
    ctx.unsupported(n, "SkipLayerNormalization whose mean or inv_std_var output is read");
  let sum = ctx.add(
    "add",
    ctx.nameFor(n, n.outputs[0]!, ".sum"),
    { a: ctx.ref(n.inputs[0]!, n), b: ctx.ref(n.inputs[1]!, n) },
    {},
    [n],
  );
  if (n.inputs[4])
    sum = ctx.add("add", ctx.nameFor(n, n.outputs[0]!, ".sum.bias"), { a: sum, b: ctx.ref(n.inputs[4], n) }, {}, [n]);
  const normed = ctx.add(
    "layer-norm",
    ctx.nameFor(n, n.outputs[0]!),
    { x: sum, weight: ctx.ref(n.inputs[2]!, n), bias: n.inputs[3] ? ctx.ref(n.inputs[3], n) : undefined },
    { eps: attrFloat(n, "epsilon", 1e-12) },
    [n],
  );
  ctx.setNode(n.outputs[0]!, normed);
  if (n.outputs[3]) ctx.setNode(n.outputs[3], sum);
}

function split(ctx: LowerContext, n: NodeIn): void {
  const shape = ctx.shapeOf(n.inputs[0]!, n);
  const axis = normAxis(n, attrInt(n, "axis", 0), shape.length);
  const sizesT = ctx.constOf(n.inputs[1]);
  if (n.inputs[1] && !sizesT) ctx.unsupported(n, "Split by sizes known only at run time");
  const sizes = splitSizes(n, shape[axis]!, sizesT ? Array.from(sizesT.data) : attrInts(n, "split"), n.outputs.length);
  let start = 0;
  n.outputs.forEach((o, i) => {
    const size = sizes[i]!;
    if (o)
      ctx.setNode(
        o,
        ctx.add(
          "slice",
          ctx.nameFor(n, o, n.outputs.length > 1 ? `:${i}` : ""),
          { x: ctx.ref(n.inputs[0]!, n) },
          { axis, start, size },
          [n],
        ),
      );
    start += size;
  });
}

function sliceNode(ctx: LowerContext, n: NodeIn): void {
  const shape = ctx.shapeOf(n.inputs[0]!, n);
  const k = [1, 2, 3, 4].map((i) =>
    n.inputs[i]
      ? (ctx.constOf(n.inputs[i]) ?? ctx.unsupported(n, `Slice whose input ${i} is known only at run time`))
      : undefined,
  );
  const list = (t: HostTensor | undefined) => (t ? Array.from(t.data) : undefined);
  const spec = sliceSpec(n, shape, list(k[0])!, list(k[1])!, list(k[2]), list(k[3]));
  let r = ctx.ref(n.inputs[0]!, n);
  const narrowed = spec
    .map((s, axis) => ({ ...s, axis }))
    .filter((s, axis) => s.count !== shape[axis] || s.start !== 0);
  if (narrowed.some((s) => s.step !== 1)) ctx.unsupported(n, "Slice with a step other than 1");
  narrowed.forEach((s, i) => {
    r = ctx.add(
      "slice",
      ctx.nameFor(n, n.outputs[0]!, i < narrowed.length - 1 ? `.axis${s.axis}` : ""),
      { x: r },
      { axis: s.axis, start: s.start, size: s.count },
      [n],
    );
  });
  ctx.env.set(
    n.outputs[0]!,
    narrowed.length
      ? { kind: "node", ref: r, shape: ctx.b.shapeOf(r) as number[], dtype: ctx.b.dtypeOf(r) }
      : ctx.val(n.inputs[0]!, n),
  );
}

/**
 * ONNX's SoftmaxCrossEntropyLoss (torch's F.cross_entropy): scores [N, C] or [N, C, d…] (classes on axis 1, moved
 * last), labels [N] / [N, d…], reduction mean (over the positions not ignored), sum or none, ignore_index.
 */
function softmaxCrossEntropy(ctx: LowerContext, n: NodeIn): void {
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
