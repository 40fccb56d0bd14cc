// torch.nn.MultiheadAttention's constructor arguments, under their own names (embed_dim, num_heads, dropout, bias,
// add_bias_kv, add_zero_attn, kdim, vdim, batch_first), completed from its state_dict: embed_dim, kdim, vdim and bias
// are in the weights' shapes and keys; num_heads and batch_first are in none, so num_heads must be passed and
// batch_first takes PyTorch's default (False: [L, B, E]).
import { formatShape, UnsupportedError, type AnyTensor } from "@attngraph/tensor";
import { ConfigFields, ModelConfigError } from "./config-fields.js";

export interface MhaConfigInput {
  readonly embed_dim?: number;
  readonly num_heads?: number;
  readonly dropout?: number;
  readonly bias?: boolean;
  readonly add_bias_kv?: boolean;
  readonly add_zero_attn?: boolean;
  readonly kdim?: number | null;
  readonly vdim?: number | null;
  readonly batch_first?: boolean;
  readonly [other: string]: unknown;
}

export interface MhaConfig {
  /** E. */
  readonly embedDim: number;
  /** H (E = H·D). */
  readonly numHeads: number;
  readonly kdim: number;
  readonly vdim: number;
  /** kdim = vdim = E: one `in_proj_weight` [3E, E]; otherwise `q_proj_weight`, `k_proj_weight`, `v_proj_weight`. */
  readonly packed: boolean;
  /** `in_proj_bias` [3E] and `out_proj.bias` [E] (PyTorch's `bias` sets both). */
  readonly bias: boolean;
  readonly batchFirst: boolean;
}

/** What the state_dict says: E, kdim, vdim, packed or not, biases or not. */
export interface MhaShapes {
  readonly embedDim: number;
  readonly kdim: number;
  readonly vdim: number;
  readonly packed: boolean;
  readonly bias: boolean;
}

const FIELDS = [
  "embed_dim",
  "num_heads",
  "dropout",
  "bias",
  "add_bias_kv",
  "add_zero_attn",
  "kdim",
  "vdim",
  "batch_first",
  "device",
  "dtype",
];

/** The module's shapes off its state_dict keys, or an error naming what is not there (or not supported). */
export function mhaShapesOf(sd: ReadonlyMap<string, AnyTensor>): MhaShapes {
  // bias_k / bias_v exist only with add_bias_kv=True: a key and value appended to every sequence, not built here.
  for (const key of ["bias_k", "bias_v"])
    if (sd.has(key))
      throw new UnsupportedError(
        `add_bias_kv (the checkpoint has ${key}): torch.nn.MultiheadAttention with add_bias_kv=True is not supported`,
        { subject: key },
      );
  const out = sd.get("out_proj.weight");
  const packed = sd.get("in_proj_weight");
  const q = sd.get("q_proj_weight");
  const rows = (t: AnyTensor | undefined) => (t && t.shape.length === 2 ? t.shape : undefined);
  if (!rows(out) || (!rows(packed) && !rows(q))) {
    const show = (k: string) => (sd.has(k) ? `${k} ${formatShape(sd.get(k)!.shape)}` : `no ${k}`);
    throw new ModelConfigError(
      "checkpoint",
      "not a torch.nn.MultiheadAttention state_dict",
      "in_proj_weight [3·E, E] (or q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim]) and out_proj.weight [E, E]",
      `${show(packed ? "in_proj_weight" : "q_proj_weight")}, ${show("out_proj.weight")}`,
    );
  }
  const E = out!.shape[1]!;
  const bias = sd.has("in_proj_bias");
  // Shapes are checked by weightsFrom, which names every misfit at once; here only what the config is read from.
  if (packed) return { embedDim: E, kdim: E, vdim: E, packed: true, bias };
  const cols = (k: string) => rows(sd.get(k))?.[1] ?? E;
  return { embedDim: E, kdim: cols("k_proj_weight"), vdim: cols("v_proj_weight"), packed: false, bias };
}

/** The full config from the caller's fields and what the weights said; a field that contradicts them names both. */
export function mhaConfigFrom(input: MhaConfigInput | undefined, shapes: MhaShapes): MhaConfig {
  const f = new ConfigFields(
    input,
    "{ num_heads: 4 }",
    "not an argument of torch.nn.MultiheadAttention (or not supported)",
    FIELDS,
  );
  for (const key of ["add_bias_kv", "add_zero_attn"])
    if (f.optional(key, "boolean") === true)
      throw new UnsupportedError(`${key}: torch.nn.MultiheadAttention with ${key}=True is not supported`, {
        subject: `config.${key}`,
      });
  const E = f.agreeing("embed_dim", f.integer("embed_dim"), shapes.embedDim, "columns of out_proj.weight");
  const packed = (dim: string) => `in_proj_weight is packed, so ${dim} = embed_dim`;
  f.agreeing("kdim", f.integer("kdim"), shapes.kdim, shapes.packed ? packed("kdim") : "columns of k_proj_weight");
  f.agreeing("vdim", f.integer("vdim"), shapes.vdim, shapes.packed ? packed("vdim") : "columns of v_proj_weight");
  f.agreeing("bias", f.optional("bias", "boolean"), shapes.bias, "whether in_proj_bias is there");
  const H = f.heads(f.integer("num_heads"), "num_heads", E, "embed_dim");
  f.dropout();
  return {
    embedDim: E,
    numHeads: H,
    kdim: shapes.kdim,
    vdim: shapes.vdim,
    packed: shapes.packed,
    bias: shapes.bias,
    batchFirst: f.optional("batch_first", "boolean") ?? false,
  };
}
