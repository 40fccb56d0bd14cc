// The worked example's SimpleTransformer as graph nodes: x = embed(tokens) + pos_embed; N pre-norm blocks with causal
// attention; logits = output(x). Names are its state_dict keys (embed.weight, pos_embed, transformer.ln1.weight, …,
// output.weight) and its modules (nodes `embed`, `embed.pos`, `transformer.*`, `output`).
import { ConfigError } from "@attngraph/attention";
import { GraphBuilder, type OpGraph, type OpRegistry } from "@attngraph/graph";
import { addTransformerBlock } from "./block.js";
import { checkOptions } from "./args.js";
import { normalizeTransformerConfig, type TransformerConfigInput } from "./config.js";
import { addLinear } from "./layers.js";

export interface TransformerOptions {
  /**
   * Also take int32 `targets` [B, T] and add a node `loss` = cross-entropy of the logits against them (mean over every
   * position, as the worked example's training loop computes it), an output beside `output`.
   */
  readonly loss?: boolean;
  readonly registry?: OpRegistry;
  /**
   * Dropout (config.dropout > 0) in training mode: each block drops attention weights, with new masks on every run
   * (every training step). Eval (identity) by default: build the graph you evaluate or generate with without it.
   */
  readonly training?: boolean;
  /** Seed of the dropout masks (default 0); block i uses seed + i, so blocks drop independently. */
  readonly seed?: number;
}

/** The name of block i of n: `transformer` for a single block (the worked example), else `transformer.<i>`. */
export function blockName(i: number, n: number): string {
  return n === 1 ? "transformer" : `transformer.${i}`;
}

/**
 * A SimpleTransformer graph: input `tokens` [B, seqLen] int32 → output `output`, the logits [B, seqLen, vocabSize]
 * (and `loss` with options.loss). Attention is causal by attribute, the mask the example builds as tril(ones(T, T)).
 */
export function simpleTransformer(config: TransformerConfigInput, options: TransformerOptions = {}): OpGraph {
  const c = normalizeTransformerConfig(config);
  checkOptions("simpleTransformer options", options, "{ loss?, registry?, training?, seed? }");
  const b = new GraphBuilder(options.registry ? { registry: options.registry } : {});
  const tokens = b.input("tokens", ["B", c.seqLen], "int32");
  const table = b.weight("embed.weight", [c.vocabSize, c.embedDim]);
  const embedded = b.add("embedding", "embed", { ids: tokens, weight: table }); // [B, T, E]
  const pos = b.weight("pos_embed", [1, c.seqLen, c.embedDim]);
  let x = b.add("add", "embed.pos", { a: embedded, b: pos }); // [B, T, E], pos_embed broadcast over the batch
  const seed = options.seed ?? 0;
  if (!Number.isSafeInteger(seed) || seed < 0 || seed + c.blocks - 1 > 0xffffffff)
    throw new ConfigError("seed", "invalid dropout seed", "an integer in [0, 2^32 − blocks]", String(options.seed));
  const attention = c.dropout > 0 ? { ...c.attention, dropout: c.dropout } : c.attention;
  for (let i = 0; i < c.blocks; i++) {
    const dropout = c.dropout > 0 && options.training === true ? { training: true, seed: seed + i } : {};
    x = addTransformerBlock(
      b,
      x,
      { ...c, attention, causal: true },
      { prefix: blockName(i, c.blocks), ...dropout },
    ).output;
  }
  const logits = addLinear(b, x, "output", c.vocabSize); // [B, T, V]
  b.output(logits);
  if (options.loss) {
    const targets = b.input("targets", ["B", c.seqLen], "int32");
    b.output(b.add("cross-entropy", "loss", { logits, targets }, { reduction: "mean" }));
  }
  return b.build();
}
