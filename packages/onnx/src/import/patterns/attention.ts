// Attention as exporters write it: MatMul(q, kᵀ) → scale (Mul/Div by a constant) → mask (Where with a constant
// condition and a very negative fill, or Add of a constant bias) → Softmax(last axis) → MatMul(·, v). It becomes
// attngraph's score / mask / softmax / weighted-sum nodes (which the scheduler's fusion then runs as one fused
// attention), named after the ONNX nodes, with the usual short names ("…/scores", "…/weights") as aliases.
import type { Ref } from "@attngraph/graph";
import type { GraphIndex } from "../graph-index.js";
import { attrInts } from "../host-ops.js";
import { sizeOf, type HostTensor } from "../host-tensor.js";
import type { LowerContext } from "../lower-context.js";
import type { NodeIn } from "../read-model.js";
import { feeding, scalarProduct, splitStatic, type Group } from "./group.js";

/** A fill at or below this hides a key (−∞, torch.finfo(float32).min, HF's older −1e4 and −1e9). */
const HIDING_FILL = -1e4;

export function matchAttention(index: GraphIndex, softmax: NodeIn): Group | undefined {
  if (softmax.domain !== "") return undefined;
  const nodes: NodeIn[] = [];
  let pre = softmax.inputs[0]!;
  let reader = softmax;
  // The mask: Where(cond, fill, scores) / Where(cond, scores, fill), or scores + bias.
  let mask: { node: NodeIn; cond?: string; fill?: string; hideWhenTrue?: boolean; bias?: string } | undefined;
  const where = feeding(index, pre, "Where", reader);
  const add = feeding(index, pre, "Add", reader);
  if (where) {
    const [c, a, b] = where.inputs as [string, string, string];
    if (!index.isStatic(c)) return undefined;
    if (index.isStatic(a) && !index.isStatic(b)) mask = { node: where, cond: c, fill: a, hideWhenTrue: true };
    else if (index.isStatic(b) && !index.isStatic(a)) mask = { node: where, cond: c, fill: b, hideWhenTrue: false };
    else return undefined;
    pre = mask.hideWhenTrue ? b : a;
    reader = where;
  } else if (add) {
    const s = splitStatic(index, add);
    if (!s) return undefined;
    mask = { node: add, bias: s.constant };
    pre = s.runtime;
    reader = add;
  }
  if (mask) nodes.push(mask.node);
  // The scale: Mul or Div by a static scalar.
  let scaleBy: { value: string; divide: boolean } | undefined;
  const mul = feeding(index, pre, "Mul", reader) ?? feeding(index, pre, "Div", reader);
  const ms = mul && splitStatic(index, mul);
  if (mul && ms && (mul.opType === "Mul" || mul.inputs[1] === ms.constant)) {
    scaleBy = { value: ms.constant, divide: mul.opType === "Div" };
    nodes.push(mul);
    pre = ms.runtime;
    reader = mul;
  }
  const score = feeding(index, pre, "MatMul", reader);
  if (!score) return undefined;
  nodes.push(score);
  const [q, kt] = score.inputs as [string, string];
  if (index.isStatic(q) || index.isStatic(kt)) return undefined;
  const kTranspose = feeding(index, kt, "Transpose", score);
  if (kTranspose) nodes.push(kTranspose);
  // The weighted sum: the MatMul reading the probabilities as its left operand.
  const probs = softmax.outputs[0]!;
  const wsUse = index.usesOf(probs).find((u) => u.node.opType === "MatMul" && u.node.domain === "" && u.input === 0 && !index.isStatic(u.node.inputs[1]!));
  const ws = wsUse?.node;
  const terminal = ws ?? softmax;
  const internal = [...nodes, ...(ws ? [softmax] : [])];
  return {
    kind: "attention",
    terminal,
    internal,
    lower: (ctx) => {
      const qShape = ctx.shapeOf(q, score);
      // kᵀ itself is not built when a Transpose made it (that Transpose is part of the group): its shape from k's.
      const ktShape = kTranspose ? permuted(ctx.shapeOf(kTranspose.inputs[0]!, kTranspose), attrInts(kTranspose, "perm")) : ctx.shapeOf(kt, score);
      if (qShape.length !== 4 || ktShape.length !== 4) return false;
      const scale = scaleBy ? scalarProduct(ctx, [scaleBy.value]) : 1;
      if (scale === undefined || !Number.isFinite(scale) || scale === 0) return false;
      const s = scaleBy?.divide ? 1 / scale : scale;
      let maskAttrs: { causal: boolean; mask?: HostTensor; bias?: HostTensor } | undefined;
      if (mask?.cond !== undefined) {
        const fill = scalarProduct(ctx, [mask.fill!]);
        const cond = ctx.constOf(mask.cond);
        if (fill === undefined || !(fill <= HIDING_FILL) || !cond) return false;
        const keep = userMask(cond, qShape[2]!, ktShape[3]!, mask.hideWhenTrue!);
        if (!keep) return false;
        maskAttrs = isCausal(keep) ? { causal: true } : { causal: false, mask: keep };
      } else if (mask?.bias !== undefined) {
        const bias = ctx.constOf(mask.bias);
        const b = bias && userMask(bias, qShape[2]!, ktShape[3]!, undefined);
        if (!b) return false;
        maskAttrs = { causal: false, bias: b };
      }
      const k = keysOf(ctx, kTranspose, kt, score);
      const named = (n: NodeIn) => ctx.nameFor(n, n.outputs[0]!);
      const scores = ctx.add("score", named(score), { q: ctx.ref(q, score), k }, {}, [score, ...(kTranspose ? [kTranspose] : [])]);
      ctx.setNode(score.outputs[0]!, scores);
      let masked: Ref = scores;
      if (maskAttrs) {
        const withBias = maskAttrs.bias !== undefined;
        const inputs = {
          scores,
          mask: maskAttrs.mask && ctx.weight(`${mask!.node.name}.keep`, maskAttrs.mask),
          bias: maskAttrs.bias && ctx.weight(`${mask!.node.name}.bias`, maskAttrs.bias),
        };
        masked = ctx.add("mask", named(mask!.node), inputs, { causal: maskAttrs.causal, window: null, alignment: "top-left", scale: withBias ? s : 1 }, [mask!.node, ...(mul ? [mul] : [])], maskAttrs.causal ? "causal" : withBias ? "additive bias" : "0/1 mask");
        ctx.aliases.set(`${scopeOf(softmax.name)}masked`, masked);
      }
      const weights = ctx.add("softmax", named(softmax), { x: masked }, { scale: maskAttrs?.bias ? 1 : s }, [softmax, ...(mul && !maskAttrs ? [mul] : [])]);
      ctx.setNode(probs, weights);
      const scope = scopeOf(softmax.name);
      ctx.aliases.set(`${scope}scores`, scores);
      ctx.aliases.set(`${scope}weights`, weights);
      const built = [scores, ...(maskAttrs ? [masked] : []), weights];
      if (ws) {
        const context = ctx.add("weighted-sum", named(ws), { weights, v: ctx.ref(ws.inputs[1]!, ws) }, {}, [ws]);
        ctx.setNode(ws.outputs[0]!, context);
        ctx.aliases.set(`${scope}context.heads`, context);
        built.push(context);
      }
      ctx.chains.push({ scope, onnx: [...internal, terminal].map((n) => n.name), nodes: built, mask: maskAttrs ? (maskAttrs.causal ? "causal" : maskAttrs.bias ? "additive bias" : "0/1 mask") : "none" });
      return true;
    },
  };
}

/** "/h.0/attn/Softmax" → "/h.0/attn/"; a name without a path → "". */
export function scopeOf(name: string): string {
  const i = Math.max(name.lastIndexOf("/"), name.lastIndexOf("."));
  return i >= 0 ? name.slice(0, i + 1) : "";
}

/** k [B, H, S, D] from kᵀ: undoing the Transpose that made kᵀ, or transposing its last two axes. */
function keysOf(ctx: LowerContext, kTranspose: NodeIn | undefined, kt: string, score: NodeIn): Ref {
  if (kTranspose) {
    const rank = ctx.shapeOf(kTranspose.inputs[0]!, kTranspose).length;
    const perm = [...(attrInts(kTranspose, "perm") ?? Array.from({ length: rank }, (_, i) => rank - 1 - i))];
    [perm[2], perm[3]] = [perm[3]!, perm[2]!];
    const source = ctx.ref(kTranspose.inputs[0]!, kTranspose);
    if (perm.every((p, i) => p === i)) return source;
    return ctx.add("transpose", ctx.nameFor(kTranspose, kTranspose.outputs[0]!), { x: source }, { perm }, [kTranspose], "keys in [B, H, S, D] (the ONNX node made kᵀ)");
  }
  return ctx.add("transpose", ctx.nameFor(score, kt, ".keys"), { x: ctx.ref(kt, score) }, { perm: [0, 1, 3, 2] }, [score], "keys in [B, H, S, D]");
}

/**
 * A constant condition or bias broadcast against scores [B, H, L, S] as attngraph's mask takes it: [L, S], or [B, H,
 * L, S] with dims of 1 (ONNX aligns a rank-3 tensor to [H, L, S], attngraph's rank 3 means [B, L, S], so it is
 * written as rank 4). For a condition: 1 = keep. Undefined when the tensor does not broadcast that way.
 */
function userMask(t: HostTensor, l: number, s: number, hideWhenTrue: boolean | undefined): HostTensor | undefined {
  if (t.shape.length > 4) return undefined;
  const shape = [...Array(4 - t.shape.length).fill(1), ...t.shape] as number[];
  if ((shape[2] !== l && shape[2] !== 1) || (shape[3] !== s && shape[3] !== 1)) return undefined;
  if (shape[2] !== l || shape[3] !== s) return undefined; // attngraph's mask takes full [L, S] planes
  const data = hideWhenTrue === undefined ? Float32Array.from(t.data) : Float32Array.from(t.data, (v) => ((v !== 0) !== hideWhenTrue ? 1 : 0));
  const leading = shape[0] === 1 && shape[1] === 1;
  return { dtype: "float32", shape: leading ? [l, s] : shape, data };
}

/** A keep-mask [L, S] that is exactly top-left causal (key j visible to query i iff j ≤ i). */
function isCausal(keep: HostTensor): boolean {
  if (keep.shape.length !== 2) return false;
  const [l, s] = keep.shape as [number, number];
  for (let i = 0; i < l; i++) for (let j = 0; j < s; j++) if ((keep.data[i * s + j] === 1) !== j <= i) return false;
  return sizeOf(keep.shape) > 0;
}


function permuted(shape: readonly number[], perm: readonly number[] | undefined): number[] {
  return (perm ?? shape.map((_, i) => shape.length - 1 - i)).map((p) => shape[p]!);
}
