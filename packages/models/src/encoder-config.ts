// torch.nn.TransformerEncoderLayer's constructor arguments, under their own names (d_model, nhead, dim_feedforward,
// activation, layer_norm_eps, batch_first, norm_first, bias). d_model and dim_feedforward are read from the weights;
// nhead, the activation, the norm placement and the batch layout are in no weight, so they come from the caller with
// PyTorch's defaults (relu, post-norm, sequence-first) when left out — as the module would run.
import { ModelConfigError, integerField, optionalField } from "./config-fields.js";

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
  const c = input ?? {};
  if (typeof c !== "object" || c === null || Array.isArray(c))
    throw new ModelConfigError("config", "not a config object", "an object such as { nhead: 4 }", String(c));
  for (const key of Object.keys(c))
    if (!FIELDS.includes(key))
      throw new ModelConfigError(
        `config.${key}`,
        "not an argument of torch.nn.TransformerEncoderLayer (or not supported)",
        FIELDS.join(", "),
        key,
      );
  const dModel = integerField(c, "d_model") ?? shapes.dModel;
  if (dModel !== shapes.dModel)
    throw new ModelConfigError(
      "config.d_model",
      "disagrees with the checkpoint (columns of self_attn.in_proj_weight)",
      String(shapes.dModel),
      String(dModel),
    );
  const ff = integerField(c, "dim_feedforward") ?? shapes.dimFeedforward;
  if (ff !== shapes.dimFeedforward)
    throw new ModelConfigError(
      "config.dim_feedforward",
      "disagrees with the checkpoint (rows of linear1.weight)",
      String(shapes.dimFeedforward),
      String(ff),
    );
  const nHead = integerField(c, "nhead");
  if (nHead === undefined)
    throw new ModelConfigError(
      "config.nhead",
      "the number of heads is in no weight's shape: pass it",
      `an integer dividing d_model ${dModel}`,
      "none",
    );
  if (dModel % nHead !== 0)
    throw new ModelConfigError("config.nhead", "nhead must divide d_model", `a divisor of ${dModel}`, String(nHead));
  const activation = optionalField(c, "activation", "string") ?? "relu";
  if (activation !== "relu" && activation !== "gelu")
    throw new ModelConfigError("config.activation", "unsupported activation", '"relu" or "gelu"', activation);
  const bias = optionalField(c, "bias", "boolean") ?? shapes.bias;
  if (bias !== shapes.bias)
    throw new ModelConfigError(
      "config.bias",
      "disagrees with the checkpoint (whether self_attn.in_proj_bias is there)",
      String(shapes.bias),
      String(bias),
    );
  const eps = optionalField(c, "layer_norm_eps", "number") ?? 1e-5;
  if (!(eps > 0)) throw new ModelConfigError("config.layer_norm_eps", "must be positive", "> 0", String(eps));
  const dropout = optionalField(c, "dropout", "number");
  if (dropout !== undefined && (dropout < 0 || dropout > 1))
    throw new ModelConfigError(
      "config.dropout",
      "a probability",
      "0 <= dropout <= 1 (eval: not applied)",
      String(dropout),
    );
  return {
    dModel,
    nHead,
    dimFeedforward: ff,
    activation,
    layerNormEps: eps,
    batchFirst: optionalField(c, "batch_first", "boolean") ?? false,
    normFirst: optionalField(c, "norm_first", "boolean") ?? false,
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

const POSITIONAL = [
  "d_model",
  "nhead",
  "dim_feedforward",
  "dropout",
  "activation",
  "layer_norm_eps",
  "batch_first",
  "norm_first",
];
