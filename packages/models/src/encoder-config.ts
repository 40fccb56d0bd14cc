// torch.nn.TransformerEncoderLayer's constructor arguments, under their own names (d_model, nhead, dim_feedforward,
// activation, layer_norm_eps, batch_first, norm_first, bias). d_model and dim_feedforward are read from the weights;
// nhead, the activation, the norm placement and the batch layout are in no weight, so they come from the caller with
// PyTorch's defaults (relu, post-norm, sequence-first) when left out — as the module would run.
import { ConfigFields, ModelConfigError } from "./config-fields.js";

export interface EncoderLayerConfigInput {
  readonly d_model?: number;
  readonly nhead?: number;
  readonly dim_feedforward?: number;
  readonly dropout?: number;
  readonly activation?: string;
  readonly layer_norm_eps?: number;
  readonly batch_first?: boolean;
  readonly norm_first?: boolean;
  readonly bias?: boolean;
  readonly [other: string]: unknown;
}

export interface EncoderLayerConfig {
  readonly dModel: number;
  readonly nHead: number;
  readonly dimFeedforward: number;
  readonly activation: "relu" | "gelu";
  readonly layerNormEps: number;
  readonly batchFirst: boolean;
  readonly normFirst: boolean;
  readonly bias: boolean;
}

const FIELDS = [
  "d_model",
  "nhead",
  "dim_feedforward",
  "dropout",
  "activation",
  "layer_norm_eps",
  "batch_first",
  "norm_first",
  "bias",
  "device",
  "dtype",
];

/** The full config from the caller's fields and what the weights said; a field that contradicts them names both. */
export function encoderLayerConfigFrom(
  input: EncoderLayerConfigInput | undefined,
  shapes: { dModel: number; dimFeedforward: number; bias: boolean },
): EncoderLayerConfig {
  const f = new ConfigFields(
    input,
    "{ nhead: 4 }",
    "not an argument of torch.nn.TransformerEncoderLayer (or not supported)",
    FIELDS,
  );
  const dModel = f.agreeing("d_model", f.integer("d_model"), shapes.dModel, "columns of self_attn.in_proj_weight");
  const ff = f.agreeing(
    "dim_feedforward",
    f.integer("dim_feedforward"),
    shapes.dimFeedforward,
    "rows of linear1.weight",
  );
  const nHead = f.heads(f.integer("nhead"), "nhead", dModel, "d_model");
  const activation = f.optional("activation", "string") ?? "relu";
  if (activation !== "relu" && activation !== "gelu")
    throw new ModelConfigError("config.activation", "unsupported activation", '"relu" or "gelu"', activation);
  const bias = f.agreeing(
    "bias",
    f.optional("bias", "boolean"),
    shapes.bias,
    "whether self_attn.in_proj_bias is there",
  );
  const eps = f.positive("layer_norm_eps", 1e-5);
  f.dropout();
  return {
    dModel,
    nHead,
    dimFeedforward: ff,
    activation,
    layerNormEps: eps,
    batchFirst: f.optional("batch_first", "boolean") ?? false,
    normFirst: f.optional("norm_first", "boolean") ?? false,
    bias,
  };
}

/**
 * The keyword arguments of a constructor call written as Python (`TransformerEncoderLayer(d_model=32, nhead=4,
 * activation='gelu', batch_first=True)`), as golden cases and model cards record a module: numbers, True/False/None,
 * quoted strings. Positional arguments take the constructor's order. Undefined when the text has no such call.
 */
export function pythonCallArgs(text: string, callee: string): Record<string, unknown> | undefined {
  const at = text.indexOf(`${callee}(`);
  if (at < 0) return undefined;
  const end = text.indexOf(")", at);
  if (end < 0) return undefined;
  const body = text.slice(at + callee.length + 1, end).trim();
  const out: Record<string, unknown> = {};
  if (body === "") return out;
  body.split(",").forEach((part, i) => {
    const eq = part.indexOf("=");
    const key = eq < 0 ? POSITIONAL[i] : part.slice(0, eq).trim();
    const raw = (eq < 0 ? part : part.slice(eq + 1)).trim();
    if (key === undefined) return;
    out[key] =
      raw === "True"
        ? true
        : raw === "False"
          ? false
          : raw === "None"
            ? null
            : /^['"].*['"]$/.test(raw)
              ? raw.slice(1, -1)
              : Number(raw);
  });
  return out;
}

/** TransformerEncoderLayer's positional arguments: its first eight, in FIELDS' order. */
const POSITIONAL = FIELDS.slice(0, 8);
