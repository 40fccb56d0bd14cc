// A golden-models case as a graph with weights and inputs: the model loaded from its .safetensors by the family's own
// names, and the forward call the case makes (logits and loss, or the encoder layer's output). What `attngraph run`,
// `diff` and `export` take from such a case; conformance runs the model itself (run-model-case.ts).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { OpGraph } from "@attngraph/graph";
import {
  EncoderLayerModel,
  MhaModel,
  loadModel,
  pythonCallArgs,
  type LoadModelOptions,
  type Model,
} from "@attngraph/models";
import type { AnyTensor } from "@attngraph/tensor";
import type { ModelCase } from "@attngraph/testkit";

/** GPTConfig's fields and the Hugging Face names the loader reads (the GELU form, the LayerNorm eps); other keys describe the case. */
const GPT_FIELDS = [
  "block_size",
  "vocab_size",
  "n_layer",
  "n_head",
  "n_embd",
  "bias",
  "dropout",
  "activation_function",
  "layer_norm_epsilon",
];

/**
 * The constructor arguments: the case's config (GPTConfig's fields of it), else for a torch module the keyword
 * arguments of its constructor call in `source`, as the public encoder case records them.
 */
export function configOf(c: ModelCase): Record<string, unknown> | undefined {
  if (c.config) {
    const gpt = Object.hasOwn(c.config, "n_embd") || Object.hasOwn(c.config, "n_layer");
    return gpt ? Object.fromEntries(Object.entries(c.config).filter(([k]) => GPT_FIELDS.includes(k))) : { ...c.config };
  }
  return pythonCallArgs(c.source, "TransformerEncoderLayer");
}

/** The case's model, loaded from the weights file beside it. */
export function modelOf(c: ModelCase, options: Omit<LoadModelOptions, "config"> = {}): Model {
  const config = configOf(c);
  return loadModel(readFileSync(join(dirname(c.file), c.weights)), { ...options, ...(config ? { config } : {}) });
}

/** The case's forward call of its model: its inputs by their PyTorch names, as the model's run() takes them. */
export function modelCall(model: Model, c: ModelCase): { graph: OpGraph; inputs: Record<string, AnyTensor> } {
  if (model instanceof EncoderLayerModel) {
    const mask = Object.keys(c.inputs).find((n) => n.startsWith("src_mask"));
    const pad = Object.keys(c.inputs).find((n) => n.startsWith("src_key_padding_mask"));
    return model.prepare({
      src: c.inputs["src"],
      ...(mask ? { src_mask: c.inputs[mask] } : {}),
      ...(pad ? { src_key_padding_mask: c.inputs[pad] } : {}),
    });
  }
  if (model instanceof MhaModel) {
    // A self-attention case gives only `query`: the same tensor is then key and value, as PyTorch's `query is key is value`.
    const query = c.inputs["query"];
    const mask = c.inputs["attn_mask"];
    const pad = c.inputs["key_padding_mask"];
    return model.prepare({
      query,
      key: c.inputs["key"] ?? query,
      value: c.inputs["value"] ?? query,
      ...(mask ? { attn_mask: mask } : {}),
      ...(pad ? { key_padding_mask: pad } : {}),
    });
  }
  const targets = c.expected.loss !== undefined ? c.inputs["targets"] : undefined;
  return model.prepare({ idx: c.inputs["idx"], ...(targets ? { targets } : {}) });
}

/** Graph, weights and inputs of the case's forward call (for run, diff and export). */
export function modelCaseSubject(c: ModelCase): {
  graph: OpGraph;
  weights: Record<string, AnyTensor>;
  inputs: Record<string, AnyTensor>;
} {
  const model = modelOf(c);
  const { graph, inputs } = modelCall(model, c);
  return { graph, weights: { ...model.weights }, inputs };
}
