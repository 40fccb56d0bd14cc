// The copy task of the worked example, as `attngraph train copy` runs it: SimpleTransformer (vocab 10, embed 32,
// 4 heads, 8 tokens) learns to repeat 100 random sequences drawn from a seed, every step on the first 32 (targets =
// tokens). The same seed gives the CLI's data and initial weights, so the page's losses are the CLI's.
import { defaultInit, simpleTransformer } from "@attngraph/nn";
import type { OpGraph } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit/prng";

export const COPY = { vocab: 10, embed: 32, heads: 4, seqLen: 8, samples: 100, batch: 32 } as const;

/** The node whose [B, H, T, T] output the heatmaps draw, and the mask node before it (−∞ marks masked cells). */
export const WEIGHTS_NODE = "transformer.attention.weights";
export const MASKED_NODE = "transformer.attention.masked";

/** `samples` sequences of random tokens in [0, vocab), from `seed` (the CLI's copyData). */
export function copyData(seed: number, samples: number = COPY.samples): Tensor<"int32"> {
  const next = mulberry32(seed);
  return Tensor.int32(
    Array.from({ length: samples * COPY.seqLen }, () => Math.floor(next() * COPY.vocab)),
    [samples, COPY.seqLen],
  );
}

export interface CopyTask {
  /** The model with its cross-entropy `loss` output. */
  readonly graph: OpGraph;
  /** PyTorch-style initial weights from the seed. */
  readonly weights: Record<string, Tensor>;
  /** The batch every step trains on: the first 32 samples, targets = tokens. */
  readonly batch: { readonly tokens: Tensor<"int32">; readonly targets: Tensor<"int32"> };
}

export function copyTask(seed: number): CopyTask {
  const graph = simpleTransformer(
    { vocabSize: COPY.vocab, embedDim: COPY.embed, nHeads: COPY.heads, seqLen: COPY.seqLen },
    { loss: true },
  );
  const data = copyData(seed);
  const first = Tensor.int32(data.toInt32Array().slice(0, COPY.batch * COPY.seqLen), [COPY.batch, COPY.seqLen]);
  return { graph, weights: defaultInit(graph, seed), batch: { tokens: first, targets: first } };
}
