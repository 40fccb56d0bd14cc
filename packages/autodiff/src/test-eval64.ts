// A float64 interpreter of op graphs for the backward-rule property tests: every op kind, built-in forward and
// backward, evaluated by testkit's float64 references on dense arrays. It knows nothing of grad(): it runs whatever
// graph it is given, so a rule is checked by running its gradient graph here against finite differences of the
// forward graph, also here, with no float32 kernel in the way.
import {
  compilePointwise,
  pointwiseExprOf,
  POINTWISE_SLOTS,
  type AnyOpDef,
  type Expr,
  type GraphNode,
  type OpGraph,
} from "@attngraph/graph";
import {
  add64,
  alibi64,
  crossEntropy64,
  crossEntropyGrad64,
  embedding64,
  embeddingGrad64,
  gelu64,
  geluGrad64,
  layerNorm64,
  layerNormGrad64,
  layerNormWeightGrad64,
  linear64,
  linearWeightGrad64,
  maskFull64,
  maskGrad64,
  pad64,
  referenceDropoutKeep,
  relu64,
  rope64,
  score64,
  slice64,
  softmax64,
  softmaxGrad64,
  sumTo64,
  weightedSum64,
  mul64,
  rmsNorm64,
  rmsNormGrad64,
  rmsNormWeightGrad64,
  silu64,
} from "@attngraph/testkit";

export interface Value64 {
  readonly shape: readonly number[];
  readonly data: Float64Array;
}

const size = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

/** Dense transpose: output dim i is input dim perm[i]. */
function transpose64(x: Value64, perm: readonly number[]): Value64 {
  const shape = perm.map((p) => x.shape[p]!);
  const inStrides = x.shape.map((_, i) => size(x.shape.slice(i + 1)));
  const out = new Float64Array(x.data.length);
  const idx = new Array<number>(shape.length).fill(0);
  for (let o = 0; o < out.length; o++) {
    let src = 0;
    for (let i = 0; i < shape.length; i++) src += idx[i]! * inStrides[perm[i]!]!;
    out[o] = x.data[src]!;
    for (let i = shape.length - 1; i >= 0; i--) {
      if (++idx[i]! < shape[i]!) break;
      idx[i] = 0;
    }
  }
  return { shape, data: out };
}

/** Dropout in float64 (testkit's referenceDropout rounds to float32, too coarse for finite differences). */
function dropout64(x: Float64Array, seed: number, rate: number): Float64Array {
  return x.map((v, i) => (referenceDropoutKeep(seed, i, rate) ? v / (1 - rate) : 0));
}

type Get = (slot: string) => Value64 | undefined;

function run(n: GraphNode, def: AnyOpDef, get: Get, bind: (shape: readonly (number | string)[]) => number[]): Value64 {
  const a = n.attrs as Record<string, any>;
  const x = () => get("x")!;
  const must = (slot: string) => get(slot)!;
  const last = (v: Value64) => v.shape[v.shape.length - 1]!;
  const heads = (q: Value64, k: Value64) => ({
    B: q.shape[0]!,
    H: q.shape[1]!,
    Hkv: k.shape[1]!,
    L: q.shape[2]!,
    S: k.shape[2]!,
    D: q.shape[3]!,
  });
  switch (n.kind) {
    case "projection":
    case "out-proj":
    case "linear-gelu": {
      const w = must("weight");
      const y = linear64(x().data, last(x()), w.data, w.shape[0]!, get("bias")?.data);
      return {
        shape: [...x().shape.slice(0, -1), w.shape[0]!],
        data: n.kind === "linear-gelu" ? gelu64(y, a.approximate) : y,
      };
    }
    case "reshape":
      return { shape: bind(a.shape), data: x().data };
    case "transpose":
      return transpose64(x(), a.perm);
    case "slice":
      return slice64(x().data, x().shape, a.axis < 0 ? a.axis + x().shape.length : a.axis, a.start, a.size);
    case "pad":
      return pad64(x().data, x().shape, a.axis < 0 ? a.axis + x().shape.length : a.axis, a.before, a.after);
    case "rope": {
      const [B, H, L, D] = x().shape as number[];
      return { shape: x().shape, data: rope64(x().data, B!, H!, L!, D!, a as never) };
    }
    case "score": {
      const q = must("q"),
        k = must("k"),
        d = heads(q, k);
      return { shape: [d.B, d.H, d.L, d.S], data: score64(q.data, k.data, d) };
    }
    case "alibi": {
      const s = must("scores");
      const [B, H, L, S] = s.shape as number[];
      return { shape: s.shape, data: alibi64(s.data, B!, H!, L!, S!, a as never) };
    }
    case "mask": {
      const s = must("scores");
      const [B, H, L, S] = s.shape as number[];
      return {
        shape: s.shape,
        data: maskFull64(s.data, B!, H!, L!, S!, a as never, get("keyPaddingMask")?.data, get("mask"), get("bias")),
      };
    }
    case "softmax":
      return { shape: x().shape, data: softmax64(x().data, last(x()), a.scale) };
    case "dropout":
      return { shape: x().shape, data: a.training && a.rate > 0 ? dropout64(x().data, a.seed, a.rate) : x().data };
    case "weighted-sum": {
      const w = must("weights"),
        v = must("v"),
        d = heads(w, v);
      return {
        shape: [d.B, d.H, d.L, v.shape[3]!],
        data: weightedSum64(w.data, v.data, { ...d, S: w.shape[3]!, D: v.shape[3]! }),
      };
    }
    case "attention": {
      const q = must("q"),
        k = must("k"),
        v = must("v"),
        d = heads(q, k);
      let s = score64(q.data, k.data, d);
      if (a.causal || get("keyPaddingMask"))
        s = maskFull64(
          s,
          d.B,
          d.H,
          d.L,
          d.S,
          { causal: a.causal, window: a.window, alignment: a.alignment },
          get("keyPaddingMask")?.data,
        );
      let w = softmax64(s, d.S, a.scale);
      if (a.training && a.dropoutRate > 0) w = dropout64(w, a.dropoutSeed, a.dropoutRate);
      return { shape: [d.B, d.H, d.L, v.shape[3]!], data: weightedSum64(w, v.data, { ...d, D: v.shape[3]! }) };
    }
    case "layer-norm":
      return {
        shape: x().shape,
        data: layerNorm64(x().data, last(x()), a.eps, get("weight")?.data, get("bias")?.data),
      };
    case "gelu":
      return { shape: x().shape, data: gelu64(x().data, a.approximate) };
    case "relu":
      return { shape: x().shape, data: relu64(x().data) };
    case "silu":
      return { shape: x().shape, data: silu64(x().data) };
    case "pointwise": {
      const slots = POINTWISE_SLOTS.map((s) => get(s));
      return pointwise64(
        pointwiseExprOf(
          a.expr,
          n.name,
          POINTWISE_SLOTS.filter((_, k) => slots[k] !== undefined),
        ),
        slots,
      );
    }
    case "rms-norm":
      return { shape: x().shape, data: rmsNorm64(x().data, last(x()), a.eps, get("weight")?.data) };
    case "mul":
      return mul64(must("a").data, must("a").shape, must("b").data, must("b").shape);
    case "add":
      return add64(must("a").data, must("a").shape, must("b").data, must("b").shape);
    case "add-layer-norm": {
      const s = add64(must("a").data, must("a").shape, must("b").data, must("b").shape);
      const e = s.shape[s.shape.length - 1]!;
      const norm = layerNorm64(s.data, e, a.eps, get("weight")?.data, get("bias")?.data);
      const out = new Float64Array(s.data.length * 2);
      for (let r = 0; r < s.data.length / e; r++) {
        out.set(s.data.subarray(r * e, (r + 1) * e), r * 2 * e);
        out.set(norm.subarray(r * e, (r + 1) * e), r * 2 * e + e);
      }
      return { shape: [...s.shape.slice(0, -1), 2 * e], data: out };
    }
    case "embedding": {
      const ids = must("ids"),
        w = must("weight");
      return { shape: [...ids.shape, w.shape[1]!], data: embedding64(ids.data, w.data, w.shape[0]!, w.shape[1]!) };
    }
    case "position-embedding": {
      // Rows offset..offset+T-1 of the table, T the ids' last dim (their values unread): a slice of the rows.
      const w = must("weight");
      return slice64(w.data, w.shape, 0, bind([a.offset])[0]!, last(must("ids")));
    }
    case "cross-entropy": {
      const l = must("logits"),
        t = must("targets");
      return {
        shape: a.reduction === "none" ? t.shape : [],
        data: crossEntropy64(l.data, last(l), t.data, a.reduction, a.ignoreIndex),
      };
    }
    case "sum-to":
      return { shape: bind(a.shape), data: sumTo64(x().data, x().shape, bind(a.shape)) };
    case "linear-weight-grad": {
      const g = must("grad");
      return { shape: [last(g), last(x())], data: linearWeightGrad64(g.data, last(g), x().data, last(x())) };
    }
    case "softmax-grad":
      return {
        shape: must("y").shape,
        data: softmaxGrad64(must("y").data, must("grad").data, last(must("y")), a.scale),
      };
    case "mask-grad":
      return { shape: must("grad").shape, data: maskGrad64(must("grad").data, must("masked").data, a.scale) };
    // The two row norms' gradients take the same arguments; only the reference differs.
    case "layer-norm-grad":
    case "rms-norm-grad": {
      const rowGrad64 = n.kind === "layer-norm-grad" ? layerNormGrad64 : rmsNormGrad64;
      return { shape: x().shape, data: rowGrad64(must("grad").data, x().data, last(x()), a.eps, get("weight")?.data) };
    }
    case "layer-norm-weight-grad":
    case "rms-norm-weight-grad": {
      const weightGrad64 = n.kind === "layer-norm-weight-grad" ? layerNormWeightGrad64 : rmsNormWeightGrad64;
      return { shape: [last(x())], data: weightGrad64(must("grad").data, x().data, last(x()), a.eps) };
    }
    case "gelu-grad":
      return { shape: x().shape, data: geluGrad64(must("grad").data, x().data, a.approximate) };
    case "embedding-grad": {
      const g = must("grad");
      return { shape: [a.rows, last(g)], data: embeddingGrad64(must("ids").data, g.data, a.rows, last(g)) };
    }
    case "position-embedding-grad": {
      const g = must("grad"),
        offset = bind([a.offset])[0]!;
      return pad64(g.data, g.shape, 0, offset, a.rows - offset - g.shape[0]!);
    }
    case "cross-entropy-grad": {
      const l = must("logits");
      return {
        shape: l.shape,
        data: crossEntropyGrad64(l.data, last(l), must("targets").data, a.reduction, a.ignoreIndex, get("grad")?.data),
      };
    }
    default:
      if (def.pointwise)
        return pointwise64(
          def.pointwise(a),
          def.inputs.map((i) => get(i.name)),
        );
      throw new Error(`eval64: no float64 reference for op ${n.kind}`);
  }
}

/**
 * An elementwise expression over the slots x0… (`values` in slot order), evaluated in float64 by the expression's own
 * compiler: derived gradients, and ops declared by their expression (a user's) that have no hand-written reference.
 */
function pointwise64(expr: Expr, values: readonly (Value64 | undefined)[]): Value64 {
  const fn = compilePointwise(expr, POINTWISE_SLOTS, { float64: true });
  const [v0, v1, v2, v3] = values.map((v) => v?.data);
  return { shape: values[0]!.shape, data: v0!.map((_, i) => fn(v0![i]!, v1?.[i] ?? 0, v2?.[i] ?? 0, v3?.[i] ?? 0)) };
}

/** Every value of one run of `graph` in float64: inputs and weights as given (int32 ids as whole numbers), then each node. */
export function eval64(graph: OpGraph, given: Readonly<Record<string, Value64>>): Map<string, Value64> {
  const values = new Map<string, Value64>(Object.entries(given));
  const bindings = new Map<string, number>();
  for (const decl of [...graph.inputs, ...graph.weights]) {
    const v = given[decl.name];
    if (!v) throw new Error(`eval64: no value for ${decl.name}`);
    decl.shape.forEach((d, i) => typeof d === "string" && bindings.set(d, v.shape[i]!));
  }
  const bind = (shape: readonly (number | string)[]) =>
    shape.map((d) => (typeof d === "string" ? bindings.get(d)! : d));
  for (const n of graph.nodes) {
    const out = run(
      n,
      graph.registry.get(n.kind, n.name),
      (slot) => (n.inputs[slot] === undefined ? undefined : values.get(n.inputs[slot]!)),
      bind,
    );
    if (out.data.length !== size(out.shape))
      throw new Error(`eval64: ${n.name} made ${out.data.length} values for [${out.shape}]`);
    values.set(n.name, out);
  }
  return values;
}
