// The worked example's pre-norm TransformerBlock as graph nodes (shared/golden-train/FORMAT.md):
//   ln1 = LayerNorm(x); attention, weights = MHA(ln1, mask); residual = x + attention;
//   ln2 = LayerNorm(residual); mlp = Linear(GELU(Linear(ln2))); output = residual + mlp.
// Node names are the example's (ln1, attention, attention.weights, residual, ln2, mlp.hidden, mlp.gelu, mlp, output),
// weight names its state_dict keys (ln1.weight, attention.qkv_proj.weight, mlp.0.weight, …), nested under a prefix.
import { addAttention, type AttentionRefs, type StandardWeight } from "@attngraph/attention";
import { GraphBuilder, type OpGraph, type OpRegistry, type Ref } from "@attngraph/graph";
import { checkOptions } from "./args.js";
import { normalizeBlockConfig, type BlockConfig, type BlockConfigInput } from "./config.js";
import { addLayerNorm, addMlp } from "./layers.js";

/** PyTorch names of the attention weights inside a block: the worked example's fused `qkv_proj` and `out_proj`. */
export const PYTORCH_ATTENTION_WEIGHTS: Readonly<Record<StandardWeight, string>> = {
  W_qkv: "qkv_proj.weight",
  b_qkv: "qkv_proj.bias",
  W_query: "q_proj.weight",
  b_query: "q_proj.bias",
  W_key: "k_proj.weight",
  b_key: "k_proj.bias",
  W_value: "v_proj.weight",
  b_value: "v_proj.bias",
  W_kv: "kv_proj.weight",
  b_kv: "kv_proj.bias",
  out_proj: "out_proj.weight",
  out_bias: "out_proj.bias",
};

/** What addTransformerBlock returns: the block's output and the nodes a tool most often taps. */
export interface BlockRefs {
  readonly output: Ref;
  readonly ln1: Ref;
  readonly attention: Ref;
  readonly weights: Ref;
  readonly residual: Ref;
  readonly ln2: Ref;
  readonly mlp: Ref;
  readonly attentionRefs: AttentionRefs;
}

export interface BlockOptions {
  /** Nests every node and weight name: "transformer.0" gives "transformer.0.ln1". */
  readonly prefix?: string;
  /** A user mask value ([T, T], [B, T, T] or [B, H, T, T] of 0/1, 0 = hidden) for the attention. */
  readonly maskRef?: Ref;
  /** A key padding mask [B, T] (1 = padded key). */
  readonly keyPaddingMaskRef?: Ref;
  /** Fused QKV projection (one matmul, the worked example's `qkv_proj`); default true. */
  readonly fusedQkv?: boolean;
  /**
   * The block of incremental decoding (AttentionOptions.decode): its attention caches keys and values between the
   * calls of a decode session (`compileDecoder`), so each call takes only the new tokens. Causal blocks only.
   */
  readonly decode?: boolean;
  /**
   * Dropout of the attention weights (config.attention.dropout > 0) in training mode; eval (identity) by default. Each
   * run draws new masks (the runtime folds its dropout step into `seed`).
   */
  readonly training?: boolean;
  /** Seed of the attention's dropout masks (default 0); give each block its own. */
  readonly seed?: number;
}

/** Adds one pre-norm transformer block reading x [B, T, E]; returns its refs. */
export function addTransformerBlock(
  b: GraphBuilder,
  x: Ref,
  configInput: BlockConfigInput | BlockConfig,
  options: BlockOptions = {},
): BlockRefs {
  const c = normalizeBlockConfig(configInput);
  checkOptions(
    "addTransformerBlock options",
    options,
    "{ prefix?, maskRef?, keyPaddingMaskRef?, fusedQkv?, decode?, training?, seed? }",
  );
  const p = options.prefix ? `${options.prefix}.` : "";
  const E = c.embedDim;
  const ln1 = addLayerNorm(b, x, `${p}ln1`, { eps: c.layerNormEps });
  const attentionRefs = addAttention(
    b,
    ln1,
    {
      qkvBias: false,
      outBias: false,
      ...c.attention,
      dIn: E,
      dOut: E,
      numHeads: c.nHeads,
      causal: c.causal,
      outProj: true,
    },
    {
      prefix: `${p}attention`,
      outputName: `${p}attention`,
      fusedQkv: options.fusedQkv ?? true,
      weightNames: PYTORCH_ATTENTION_WEIGHTS,
      ...(options.maskRef ? { maskRef: options.maskRef } : {}),
      ...(options.keyPaddingMaskRef ? { keyPaddingMaskRef: options.keyPaddingMaskRef } : {}),
      ...(c.position ? { position: c.position } : {}),
      ...(options.decode ? { decode: true } : {}),
      ...(options.training ? { training: true } : {}),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    },
  );
  const attention = attentionRefs.output;
  const residual = b.add("add", `${p}residual`, { a: x, b: attention });
  const ln2 = addLayerNorm(b, residual, `${p}ln2`, { eps: c.layerNormEps });
  const mlp = addMlp(b, ln2, `${p}mlp`, c.mlpRatio * E, { gelu: c.gelu });
  const output = b.add("add", `${p}output`, { a: residual, b: mlp });
  return { output, ln1, attention, weights: attentionRefs.weights, residual, ln2, mlp, attentionRefs };
}

/**
 * A graph of one transformer block: input `x` [B, T, E], and with `mask: true` an input `mask` [T, T] (0/1, 0 = hidden;
 * the worked example passes tril(ones(T, T))). Output `output`.
 */
export function transformerBlock(
  config: BlockConfigInput,
  options: {
    readonly mask?: boolean;
    readonly keyPaddingMask?: boolean;
    readonly fusedQkv?: boolean;
    readonly decode?: boolean;
    readonly registry?: OpRegistry;
  } = {},
): OpGraph {
  const c = normalizeBlockConfig(config);
  checkOptions("transformerBlock options", options, "{ mask?, keyPaddingMask?, fusedQkv?, decode?, registry? }");
  const b = new GraphBuilder(options.registry ? { registry: options.registry } : {});
  const x = b.input("x", ["B", "T", c.embedDim]);
  const mask = options.mask ? b.input("mask", ["T", "T"]) : undefined;
  const pad = options.keyPaddingMask ? b.input("keyPaddingMask", ["B", "T"]) : undefined;
  const refs = addTransformerBlock(b, x, c, {
    ...(mask ? { maskRef: mask } : {}),
    ...(pad ? { keyPaddingMaskRef: pad } : {}),
    ...(options.fusedQkv === undefined ? {} : { fusedQkv: options.fusedQkv }),
    ...(options.decode ? { decode: true } : {}),
  });
  return b.output(refs.output).build();
}
