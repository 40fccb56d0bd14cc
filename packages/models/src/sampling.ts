// The sampling math on one row of logits [V], on the host: pure functions, in float64. The order is Hugging Face's
// (and nanoGPT's): temperature, then top-k, then top-p, then one draw. Greedy is argmax, the first maximum on ties.
import { GenerateError } from "./generate-error.js";

/** How a token is picked from a row of logits. */
export interface SamplingOptions {
  /** Divides the logits (> 0). Ignored when greedy. */
  readonly temperature: number;
  /** Keep the k largest logits (and any tied with the k-th, as nanoGPT's `logits < v[:, [-1]]` does). */
  readonly topK?: number | undefined;
  /** Nucleus: keep the smallest set of most probable tokens whose probability sums to >= p, at least one. */
  readonly topP?: number | undefined;
  readonly greedy: boolean;
}

/** The index of the largest logit, the first on ties (as torch.argmax); −∞ entries are never larger than anything. */
export function argmax(logits: ArrayLike<number>, subject = "logits"): number {
  let best = 0;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (Number.isNaN(v)) throw new GenerateError(subject, `NaN logit at token ${i}`, "numbers (−∞ allowed)", "NaN");
    if (v > logits[best]!) best = i;
  }
  return best;
}

/**
 * The probabilities sampling draws from: softmax(logits / temperature) restricted to the top-k and then the top-p
 * set, renormalized. Returns a Float64Array [V] with 0 for every token left out.
 */
export function samplingProbs(logits: ArrayLike<number>, options: SamplingOptions, subject = "logits"): Float64Array {
  const V = logits.length;
  const scaled = new Float64Array(V);
  let max = -Infinity;
  for (let i = 0; i < V; i++) {
    const v = logits[i]!;
    if (Number.isNaN(v) || v === Infinity)
      throw new GenerateError(subject, `a logit of ${v} at token ${i}`, "finite numbers or −∞", String(v));
    scaled[i] = v / options.temperature;
    if (scaled[i]! > max) max = scaled[i]!;
  }
  if (max === -Infinity)
    throw new GenerateError(
      subject,
      "every logit is −∞ (or underflows at this temperature): nothing to sample",
      "at least one finite logit",
      "all −∞",
    );
  if (options.topK !== undefined && options.topK < V) {
    const kth = [...scaled].sort((a, b) => b - a)[options.topK - 1]!;
    for (let i = 0; i < V; i++) if (scaled[i]! < kth) scaled[i] = -Infinity;
  }
  const probs = new Float64Array(V);
  let sum = 0;
  for (let i = 0; i < V; i++) sum += probs[i] = Math.exp(scaled[i]! - max);
  for (let i = 0; i < V; i++) probs[i]! /= sum;
  if (options.topP !== undefined && options.topP < 1) nucleus(probs, options.topP);
  return probs;
}

/**
 * Zeroes every token outside the nucleus and renormalizes: tokens by probability, largest first (the lower index
 * first on ties), kept until their sum reaches p; the most probable token is always kept.
 */
function nucleus(probs: Float64Array, p: number): void {
  const order = Array.from(probs.keys()).sort((a, b) => probs[b]! - probs[a]! || a - b);
  let cumulative = 0;
  let kept = 0;
  while (kept < order.length && (kept === 0 || cumulative < p)) cumulative += probs[order[kept++]!]!;
  for (let i = kept; i < order.length; i++) probs[order[i]!] = 0;
  for (let i = 0; i < kept; i++) probs[order[i]!]! /= cumulative;
}

/** One draw from `probs` with the uniform number u in [0, 1): the first index whose cumulative sum exceeds u. */
export function drawFrom(probs: ArrayLike<number>, u: number): number {
  let cumulative = 0;
  let last = 0;
  for (let i = 0; i < probs.length; i++) {
    if (probs[i]! <= 0) continue;
    cumulative += probs[i]!;
    last = i;
    if (u < cumulative) return i;
  }
  // Rounding may leave the sum a hair under 1: u past it picks the last token that has any probability.
  return last;
}

/** The next token for one row of logits: argmax when greedy, else a draw with `random()` from samplingProbs. */
export function sampleToken(
  logits: ArrayLike<number>,
  options: SamplingOptions,
  random: () => number,
  subject = "logits",
): number {
  if (options.greedy) return argmax(logits, subject);
  return drawFrom(samplingProbs(logits, options, subject), random());
}
