// The frame every causal LM here is built in (GPT-2 / nanoGPT, Llama): int32 ids `idx` [B, T] → token embedding →
// the family's own positions, layers and final norm → logits by a head tied to the embedding table or its own
// `lm_head.weight`, and with `loss` the mean cross-entropy against `targets` [B, T], skipping the family's ignore index.
import { GraphBuilder, type OpGraph, type Ref } from "@attngraph/graph";
import { ModelConfigError } from "./config-fields.js";

export interface LmGraphOptions {
  /** Also take int32 `targets` [B, T] and output `loss`, the mean cross-entropy (the family's ignore index skipped). */
  readonly loss?: boolean;
  /** The graph of incremental decoding (compileDecoder): keys and values cached, positions from the decoder's N. */
  readonly decode?: boolean;
  /**
   * Logits of the last position only, [B, 1, V] (Hugging Face's `logits_to_keep=1`): what generation samples from. The
   * head, the largest matmul of a small model, then runs on one row instead of T (a prompt of 1024 tokens: 1024×).
   */
  readonly lastPosition?: boolean;
}

/** A family's part of the frame: its embedding's name, its width and the target its loss skips. */
export interface LmFrame {
  /** The token embedding's module (`transformer.wte`, `model.embed_tokens`); its weight is `<embedding>.weight`. */
  readonly embedding: string;
  /** E, the width of the residual stream. */
  readonly width: number;
  readonly ignoreIndex: number;
}

/** What the frame reads of a config: the vocabulary's size, and whether lm_head is the embedding table (tied). */
export interface LmSizes {
  readonly vocabSize: number;
  readonly tied: boolean;
}

/**
 * The causal LM graph: `body` takes the token embeddings [B, T, E] (and `idx`) and returns the final norm's output
 * [B, T, E]; the frame adds the input, the embedding before it and the head (and loss) after it, in that order.
 */
export function lmGraph(
  c: LmSizes,
  frame: LmFrame,
  options: LmGraphOptions,
  body: (b: GraphBuilder, tokens: Ref, idx: Ref) => Ref,
): OpGraph {
  if (options.loss && options.lastPosition)
    throw new ModelConfigError(
      "graph options",
      "unsupported: a loss over the last position's logits only (the loss needs every position's)",
      "loss or lastPosition, not both",
      "loss and lastPosition",
    );
  const b = new GraphBuilder();
  const idx = b.input("idx", ["B", "T"], "int32");
  const table = b.weight(`${frame.embedding}.weight`, [c.vocabSize, frame.width]);
  const tokens = b.add("embedding", frame.embedding, { ids: idx, weight: table }); // [B, T, E]
  const final = body(b, tokens, idx);
  const normed = options.lastPosition
    ? b.add("slice", "last_position", { x: final }, { axis: 1, start: -1, size: 1 })
    : final;
  const head = c.tied ? table : b.weight("lm_head.weight", [c.vocabSize, frame.width]);
  const logits = b.add("projection", "logits", { x: normed, weight: head }); // [B, T, V] ([B, 1, V]: lastPosition)
  b.output(logits);
  if (options.loss) {
    const targets = b.input("targets", ["B", "T"], "int32");
    b.output(
      b.add("cross-entropy", "loss", { logits, targets }, { reduction: "mean", ignoreIndex: frame.ignoreIndex }),
    );
  }
  return b.build();
}
