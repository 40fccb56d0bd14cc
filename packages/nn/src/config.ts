// The configs of the worked example's modules (shared/golden-train/FORMAT.md), checked once with errors naming the key.
import { ConfigError, type AttentionConfigInput } from "@attngraph/attention";
import type { PositionEncoding } from "@attngraph/attention";

/** A pre-norm transformer block: LayerNorm → attention → residual → LayerNorm → GELU MLP → residual. */
export interface BlockConfigInput {
  /** E, the model dim. */
  readonly embedDim: number;
  /** H, attention heads; E must be a multiple of H. */
  readonly nHeads: number;
  /** The MLP's hidden width is mlpRatio · E (default 4). */
  readonly mlpRatio?: number;
  /** LayerNorm eps (default 1e-5). */
  readonly layerNormEps?: number;
  /** "erf" (exact, PyTorch's default) or "tanh" (GPT-2's approximation). Default "erf". */
  readonly gelu?: "erf" | "tanh";
  /** Causal attention by attribute (fusable), as well as or instead of a user mask input. Default false. */
  readonly causal?: boolean;
  /**
   * Everything else of the attention inside, as @attngraph/attention's config takes it (numKvHeads for GQA, window,
   * qkvBias, outBias, scale). dIn, dOut and numHeads come from embedDim and nHeads.
   */
  readonly attention?: Omit<AttentionConfigInput, "dIn" | "dOut" | "numHeads" | "causal">;
  /** A position encoding for the attention inside (RoPE, ALiBi). */
  readonly position?: PositionEncoding | undefined;
}

export interface BlockConfig {
  readonly embedDim: number;
  readonly nHeads: number;
  readonly mlpRatio: number;
  readonly layerNormEps: number;
  readonly gelu: "erf" | "tanh";
  readonly causal: boolean;
  readonly attention: Omit<AttentionConfigInput, "dIn" | "dOut" | "numHeads" | "causal">;
  readonly position: PositionEncoding | undefined;
}

/** SimpleTransformer: token + learned positional embedding → blocks → vocabulary projection. */
export interface TransformerConfigInput extends BlockConfigInput {
  /** V, the vocabulary size. */
  readonly vocabSize: number;
  /** T, the sequence length the positional embedding covers: the model takes tokens [B, seqLen]. */
  readonly seqLen: number;
  /** Blocks, named `transformer` when 1 (the worked example) and `transformer.0`, `transformer.1`, … otherwise. */
  readonly blocks?: number;
  /**
   * Dropout rate of the attention weights in every block (the worked example's config; it trains with 0). Active only
   * in a graph built with `training: true` (see TransformerOptions); default 0.
   */
  readonly dropout?: number;
}

export interface TransformerConfig extends BlockConfig {
  readonly vocabSize: number;
  readonly seqLen: number;
  readonly blocks: number;
  readonly dropout: number;
}

function positiveInt(key: string, v: unknown): number {
  if (!Number.isSafeInteger(v) || (v as number) < 1)
    throw new ConfigError(key, "must be a positive integer", "an integer >= 1", String(v));
  return v as number;
}

/** Checks a block config and fills in its defaults; a ConfigError names the key at fault. */
export function normalizeBlockConfig(raw: BlockConfigInput): BlockConfig {
  if (typeof raw !== "object" || raw === null)
    throw new ConfigError("config", "a block config must be an object", "{ embedDim, nHeads, ... }", String(raw));
  const embedDim = positiveInt("embedDim", raw.embedDim);
  const nHeads = positiveInt("nHeads", raw.nHeads);
  if (embedDim % nHeads !== 0)
    throw new ConfigError(
      "nHeads",
      "embedDim must be a multiple of nHeads",
      `a divisor of ${embedDim}`,
      String(nHeads),
    );
  const mlpRatio = raw.mlpRatio ?? 4;
  if (!Number.isSafeInteger(mlpRatio * embedDim) || mlpRatio <= 0)
    throw new ConfigError("mlpRatio", "mlpRatio · embedDim must be a positive integer", "e.g. 4", String(mlpRatio));
  const layerNormEps = raw.layerNormEps ?? 1e-5;
  if (typeof layerNormEps !== "number" || !(layerNormEps > 0) || !Number.isFinite(layerNormEps))
    throw new ConfigError("layerNormEps", "must be a positive number", "e.g. 1e-5", String(layerNormEps));
  const gelu = raw.gelu ?? "erf";
  if (gelu !== "erf" && gelu !== "tanh")
    throw new ConfigError("gelu", "unknown GELU form", '"erf" or "tanh"', String(gelu));
  const causal = raw.causal ?? false;
  if (typeof causal !== "boolean")
    throw new ConfigError("causal", "must be true or false", "a boolean", String(causal));
  return {
    embedDim,
    nHeads,
    mlpRatio,
    layerNormEps,
    gelu,
    causal,
    attention: raw.attention ?? {},
    position: raw.position,
  };
}

/** Checks a SimpleTransformer config and fills in its defaults. */
export function normalizeTransformerConfig(raw: TransformerConfigInput): TransformerConfig {
  const block = normalizeBlockConfig(raw);
  const vocabSize = positiveInt("vocabSize", raw.vocabSize);
  const seqLen = positiveInt("seqLen", raw.seqLen);
  const blocks = positiveInt("blocks", raw.blocks ?? 1);
  const dropout = raw.dropout ?? 0;
  if (typeof dropout !== "number" || !(dropout >= 0 && dropout < 1))
    throw new ConfigError("dropout", "invalid dropout rate", "a number in [0, 1)", String(raw.dropout));
  return { ...block, vocabSize, seqLen, blocks, dropout };
}
