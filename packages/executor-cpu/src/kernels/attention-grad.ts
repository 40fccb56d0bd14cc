// The fused attention backward, FlashAttention style: `attention-lse` keeps one number per query row of the forward
// (the log of its softmax denominator, max included), and `attention-grad` recomputes each weight from it where it needs
// it, as exp(scale · q·k − lse), one [64, 64] block at a time: the [L, S] weights and their gradient never exist. The
// mask rule and the dropout bits are the forward kernels' own functions, so the backward sees and drops exactly the
// pairs the forward did. The loops live in attention-grad-steps.ts as resumable steps: with a signal, a big call pauses
// between them (chunks.ts), as the forward `attention` does.
import {
  afterwards,
  chunkSignal,
  runSteps,
  attentionInputGrad,
  type AttentionGradAttrs,
  type CompiledMods,
  type AttentionLseAttrs,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInputs, result, attrsOf } from "./adapter.js";
import {
  AttentionGradScratch,
  attentionGradWork,
  attentionPassSteps,
  gradKeysPerChunk,
  sharedGradScratch,
  type AttentionGradInputs,
} from "./attention-grad-steps.js";
import { compiledMods } from "./attention-mods.js";
import { gatheredOf } from "./gathered.js";
import { keyPaddingInput } from "./key-padding.js";
import type { StridedView } from "./strided.js";

/**
 * lse[b, h, i] = m + log Σ_j exp(scale · q_i·k_j − m) over the keys query i sees (the mask kernel's rule: causal with
 * `alignment`, sliding `window`, key padding; a raw score of −∞ is hidden, as in the forward), m their max, in float64.
 * A row that sees no key gets exactly −∞; a NaN score makes its row NaN. Shapes (the op's shape rule, before dispatch) and
 * padding values (the adapter) are not checked here.
 * @param q [B, H, L, D], any strides
 * @param k [B, Hkv, S, D], any strides; Hkv divides H (query head h reads kv head ⌊h / (H / Hkv)⌋)
 * @param keyPaddingMask [B, S] of 0/1 (1 = padded key), any strides, or undefined
 * @param out where to write [B, H, L] row-major; default: a new array
 */
export function attentionLseImpl(
  q: StridedView,
  k: StridedView,
  keyPaddingMask: StridedView | undefined,
  attrs: AttentionLseAttrs,
  out?: Float32Array,
  mods?: CompiledMods,
): Float32Array {
  const y = out ?? new Float32Array(q.shape[0]! * q.shape[1]! * q.shape[2]!);
  const pass = { mode: "lse", inputs: { q, k, pad: keyPaddingMask }, attrs } as const;
  const steps = attentionPassSteps(pass, y, sharedGradScratch, Infinity, mods);
  while (!steps.next().done);
  return y;
}

/**
 * One input's gradient (attrs.wrt) of out = attention(q, k, v, keyPaddingMask), from `grad` (the gradient of out),
 * `out` itself and `lse` (attention-lse of the same q, k, mask). Per query row i with lse_i ≠ −∞, δ_i = grad_i · out_i,
 * and each key j it sees: p = exp(scale · q_i·k_j − lse_i), m = dropout's keep factor (0 or fround(1 / (1 − rate)); 1
 * without dropout, same bits as the forward), dS = scale · p · (m · grad_i·v_j − δ_i):
 *   wrt q: dq_i = Σ_j dS k_j → [B, H, L, D]; wrt k: dk_j = Σ_h Σ_i dS q_i → [B, Hkv, S, D];
 *   wrt v: dv_j = Σ_h Σ_i m p grad_i → [B, Hkv, S, Dv] (the sums over the query heads sharing j's kv head).
 * Sums run in float64, stored once as float32. A row that sees no key (lse −∞) contributes nothing (its dq is +0); a
 * hidden pair reads neither its key's nor its value's row, and a pair with coefficient 0 (hidden, dropped for dv) adds
 * nothing, not even a NaN of a q or grad row; keys no query sees get exactly 0. Shapes and padding are not checked here.
 * @param q [B, H, L, D]; k [B, Hkv, S, D]; v [B, Hkv, S, Dv]; out, grad [B, H, L, Dv]; lse [B, H, L]: any strides
 * @param into where to write the gradient row-major; default: a new array
 */
export function attentionGradImpl(
  q: StridedView,
  k: StridedView,
  v: StridedView,
  out: StridedView,
  grad: StridedView,
  lse: StridedView,
  keyPaddingMask: StridedView | undefined,
  attrs: AttentionGradAttrs,
  into?: Float32Array,
  mods?: CompiledMods,
): Float32Array {
  const y = into ?? new Float32Array(gradSize(q, k, v, attrs.wrt));
  const inputs = { q, k, v, out, grad, lse, pad: keyPaddingMask };
  const steps = attentionPassSteps({ mode: attrs.wrt, inputs, attrs }, y, sharedGradScratch, Infinity, mods);
  while (!steps.next().done);
  return y;
}

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D], optional keyPaddingMask [B, S] → [B, H, L]; attrs { causal, window, alignment, scale }. */
export const attentionLseKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [q, k] = requireInputs(call, "q", "k");
  const pad = keyPaddingInput(call, 2);
  const attrs = attrsOf<AttentionLseAttrs>(call);
  const mods = compiledMods(call, 3, false);
  const shape = [q.shape[0]!, q.shape[1]!, q.shape[2]!];
  const signal = chunkSignal(call, attentionGradWork("lse", q, k, 0), chunkWork);
  if (signal === undefined) return result(call, attentionLseImpl(q, k, pad, attrs, outData(call, shape), mods), shape);
  // In chunks: its own scratch (another kernel may run while this one waits).
  const y = outData(call, shape) ?? new Float32Array(shape[0]! * shape[1]! * shape[2]!);
  const pass = { mode: "lse", inputs: { q, k, pad }, attrs } as const;
  const steps = attentionPassSteps(pass, y, new AttentionGradScratch(), gradKeysPerChunk("lse", q, 0, chunkWork), mods);
  return afterwards(runSteps(steps, signal, chunkWork, call.node), () => result(call, y, shape));
});

/**
 * Inputs: q, k, v, out, grad, lse, optional keyPaddingMask → dq [B, H, L, D], dk [B, Hkv, S, D] or dv [B, Hkv, S, Dv];
 * attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training, wrt } (absent dropout = none).
 */
export const attentionGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [q, k, v, out, grad, lse] = requireInputs(call, "q", "k", "v", "out", "grad", "lse");
  const pad = keyPaddingInput(call, 6);
  const attrs = attrsOf<AttentionGradAttrs>(call);
  const inputs: AttentionGradInputs = { q, k, v, out, grad, lse, pad };
  if (attrs.wrt !== "q" && attrs.wrt !== "k" && attrs.wrt !== "v") {
    // A gathered input's gradient (a learnable bias table): the shared host loop, in one piece.
    const gathered = gatheredOf(call, 7);
    const shape = gathered.get(attrs.inputs![Number(attrs.wrt.slice(1))]!)!.shape;
    const y = attentionInputGrad(inputs, attrs, gathered, call.node);
    outData(call, shape)?.set(y);
    return result(call, y, shape);
  }
  const mods = compiledMods(call, 7, true);
  const shape = attrs.wrt === "q" ? q.shape : attrs.wrt === "k" ? k.shape : v.shape;
  const ndv = v.shape[3]!;
  const signal = chunkSignal(call, attentionGradWork(attrs.wrt, q, k, ndv), chunkWork);
  if (signal === undefined)
    return result(call, attentionGradImpl(q, k, v, out, grad, lse, pad, attrs, outData(call, shape), mods), shape);
  const y = outData(call, shape) ?? new Float32Array(gradSize(q, k, v, attrs.wrt));
  const pass = { mode: attrs.wrt, inputs, attrs };
  const steps = attentionPassSteps(
    pass,
    y,
    new AttentionGradScratch(),
    gradKeysPerChunk(attrs.wrt, q, ndv, chunkWork),
    mods,
  );
  return afterwards(runSteps(steps, signal, chunkWork, call.node), () => result(call, y, shape));
});

function gradSize(q: StridedView, k: StridedView, v: StridedView, wrt: AttentionGradAttrs["wrt"]): number {
  const t = wrt === "q" ? q : wrt === "k" ? k : v;
  return t.shape[0]! * t.shape[1]! * t.shape[2]! * t.shape[3]!;
}
