// attention: score → mask → softmax → dropout → weighted-sum in one pass, FlashAttention style. Keys are visited in
// blocks with a running max and sum per query row, so the [L, S] weights never exist; key blocks that causal or window
// masking hides from a whole query block are never computed. Both products run on the matmul core's packed panels and
// register tile. The mask rule and the dropout bits are the unfused kernels' own functions, so the fused kernel hides
// and drops exactly the same elements as the chain. A key whose weight is exactly 0 (masked, dropped) contributes
// nothing, not even a NaN or ±∞ of its value row (FlashAttention semantics; PyTorch's math path gives 0 · NaN = NaN):
// a key block holding such a value row takes a per-element product that skips zero weights.
// The loops live in attention-steps.ts as resumable steps: with a signal, a big call pauses between them (chunks.ts).
import { afterwards, chunkSignal, runSteps, type AttentionAttrs, type CompiledMods } from "@attngraph/graph";
import { compiledMods } from "./attention-mods.js";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInputs, result, attrsOf } from "./adapter.js";
import { AttentionScratch, attentionSteps, attentionWork, keysPerChunk, sharedScratch } from "./attention-steps.js";
import { keyPaddingInput } from "./key-padding.js";
import type { StridedView } from "./strided.js";

/**
 * context = dropout(softmax(scale · mask(Q · Kᵀ))) · V per batch and head, streaming over key blocks. The numbers equal
 * the unfused chain up to float rounding (scores stay float64 here; the chain stores them as float32).
 * - Masks: causal with `alignment`, sliding `window`, key padding; the rule is the mask kernel's.
 * - A query row with every key hidden gives zeros, never NaN. A NaN score makes its row NaN, as in softmax.
 * - A key a query cannot attend to (weight exactly 0: masked, dropped) adds nothing to its row, whatever its value row
 *   holds: a NaN or ±∞ value reaches only the queries that weigh that key.
 * - Dropout (training, rate > 0) drops weight [b, h, i, j] exactly when the dropout kernel drops element
 *   ((b · H + h) · L + i) · S + j of the weights tensor, and scales kept weights by 1 / (1 − rate).
 * Shapes (the op's shape rule, before dispatch) and padding values (the adapter) are not checked here.
 * @param q [B, H, L, D], any strides
 * @param k [B, Hkv, S, D], any strides; Hkv divides H (query head h reads kv head ⌊h / (H / Hkv)⌋)
 * @param v [B, Hkv, S, Dv], any strides
 * @param keyPaddingMask [B, S] of 0/1 (1 = padded key), any strides, or undefined
 * @param out where to write [B, H, L, Dv] row-major; default: a new array
 * @returns [B, H, L, Dv], row-major (`out` when given)
 */
export function attentionImpl(
  q: StridedView,
  k: StridedView,
  v: StridedView,
  keyPaddingMask: StridedView | undefined,
  attrs: AttentionAttrs,
  out?: Float32Array,
  mods?: CompiledMods,
): Float32Array {
  const y = out ?? new Float32Array(q.shape[0]! * q.shape[1]! * q.shape[2]! * v.shape[3]!);
  const steps = attentionSteps(q, k, v, keyPaddingMask, attrs, y, sharedScratch, Infinity, mods);
  while (!steps.next().done);
  return y;
}

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], optional keyPaddingMask [B, S] → [B, H, L, Dv];
 * attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training } (normalized: absent dropout attributes
 * are the op's defaults, no dropout).
 */
export const attentionKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const [q, k, v] = requireInputs(call, "q", "k", "v");
  const pad = keyPaddingInput(call, 3);
  const attrs = attrsOf<AttentionAttrs>(call);
  const [nb, nh, nl] = q.shape as [number, number, number, number];
  const mods = compiledMods(call, 4, false);
  const shape = [nb, nh, nl, v.shape[3]!];
  const signal = chunkSignal(call, attentionWork(q, k, v), chunkWork);
  if (signal === undefined) return result(call, attentionImpl(q, k, v, pad, attrs, outData(call, shape), mods), shape);
  // In chunks: its own scratch (another kernel may run while this one waits), steps of about one chunk of keys.
  const y = outData(call, shape) ?? new Float32Array(nb * nh * nl * v.shape[3]!);
  const steps = attentionSteps(q, k, v, pad, attrs, y, new AttentionScratch(), keysPerChunk(q, v, chunkWork), mods);
  return afterwards(runSteps(steps, signal, chunkWork, call.node), () => result(call, y, shape));
});
