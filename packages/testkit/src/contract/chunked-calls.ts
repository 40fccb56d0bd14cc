// The forward calls that every executor working in chunks checks the same way (issue 11 item 9): one call of each
// long kernel (projection, out-proj, score, weighted-sum, mask, softmax, the fused attention), shaped to span many
// chunks of a tiny chunkWork, with the awkward cases in: leading axes that do not collapse, strided heads, a
// non-finite value row, padding, a window, dropout. Each executor runs them through its own harness (a chunked call
// against one uninterrupted call, bit for bit) next to its own kernels' calls, built from the same inputs.
import { Tensor, type Shape } from "@attngraph/tensor";

/** A kernel call on host tensors, as the chunk tests write it (no signal: the harness adds one). */
export interface ChunkedCall {
  readonly kind: string;
  readonly node: string;
  readonly attrs: Record<string, unknown>;
  readonly inputs: (Tensor | undefined)[];
  readonly outShape: Shape;
}

/** Seeded values in [-scale, scale): each executor's own generator, so its inputs stay what its tests always used. */
export type SeededRandom = (shape: Shape, seed: number, scale?: number) => Tensor;

/** The inputs the forward calls are built from, for an executor's own calls to share. */
export interface ChunkedInputs {
  /** [B, H, L, D] queries, [B, Hkv, S, D] keys, split heads (strided views). */
  readonly q: Tensor;
  readonly k: Tensor;
  /** [B, Hkv, S, D] values, dense, with a NaN in row 5: a non-finite value row takes the zero-skipping product. */
  readonly vBad: Tensor;
  /** [B, S] key padding, every 7th key from the 4th. */
  readonly pad: Tensor;
  /** [B, H, L, S] scores. */
  readonly scores: Tensor;
  /** [5, 3, 48]: a permuted [3, 5, 48], leading axes that do not collapse. */
  readonly x: Tensor;
  /** Causal, window 90, bottom-right. */
  readonly mask: { readonly causal: true; readonly window: 90; readonly alignment: "bottom-right" };
}

/** [B, T, n, D] stored, seen as [B, n, T, D]: the strided layout the standard builder hands to the kernels. */
export const seededHeads = (random: SeededRandom, B: number, n: number, T: number, D: number, seed: number): Tensor =>
  random([B, T, n, D], seed).permute([0, 2, 1, 3]);

/**
 * The forward calls for head dim D (B 2, H 4, Hkv 2, L 150, S 200), from `random`, and the inputs they share. Seeds
 * 1 to 10: an executor's own calls take others.
 */
export function chunkedForwardCalls(
  random: SeededRandom,
  D: number,
): { calls: Record<string, ChunkedCall>; inputs: ChunkedInputs } {
  const B = 2,
    H = 4,
    Hkv = 2,
    L = 150,
    S = 200;
  const q = seededHeads(random, B, H, L, D, 1);
  const k = seededHeads(random, B, Hkv, S, D, 2);
  const vBad = seededHeads(random, B, Hkv, S, D, 3).contiguous();
  vBad.data[5 * D + 1] = NaN;
  const pad = new Tensor(
    Float32Array.from({ length: B * S }, (_, i) => (i % 7 === 3 ? 1 : 0)),
    [B, S],
  );
  const scores = random([B, H, L, S], 4);
  const x = random([3, 5, 48], 5).permute([1, 0, 2]);
  const mask = { causal: true, window: 90, alignment: "bottom-right" } as const;
  const calls: Record<string, ChunkedCall> = {
    projection: {
      kind: "projection",
      node: "queries",
      attrs: {},
      inputs: [x, random([40, 48], 6), random([40], 7)],
      outShape: [5, 3, 40],
    },
    "out-proj": {
      kind: "out-proj",
      node: "output",
      attrs: {},
      inputs: [random([2, 70, 48], 8), random([48, 48], 9), undefined],
      outShape: [2, 70, 48],
    },
    score: { kind: "score", node: "scores", attrs: {}, inputs: [q, k], outShape: [B, H, L, S] },
    "weighted-sum": {
      kind: "weighted-sum",
      node: "context",
      attrs: {},
      inputs: [random([B, L, H, S], 10).permute([0, 2, 1, 3]), vBad],
      outShape: [B, H, L, D],
    },
    mask: { kind: "mask", node: "masked", attrs: mask, inputs: [scores, pad], outShape: [B, H, L, S] },
    softmax: {
      kind: "softmax",
      node: "weights",
      attrs: { scale: 0.5 },
      inputs: [scores.permute([0, 1, 3, 2])],
      outShape: [B, H, S, L],
    },
    attention: {
      kind: "attention",
      node: "context.heads",
      attrs: { ...mask, scale: 0.35, dropoutRate: 0.2, dropoutSeed: 11, training: true },
      inputs: [q, k, vBad, pad],
      outShape: [B, H, L, D],
    },
  };
  return { calls, inputs: { q, k, vBad, pad, scores, x, mask } };
}
