// Where a GPT-2-family checkpoint keeps each weight. Two layouts of one network:
// - nanoGPT's state_dict: `transformer.wte.weight`, `transformer.h.0.attn.c_attn.weight` [3E, E] (nn.Linear),
//   `lm_head.weight` (the same values as wte when tied);
// - Hugging Face's GPT-2 files: the same keys without `transformer.` (GPT2Model's own; GPT2LMHeadModel keeps the
//   prefix), the four projections as Conv1D weights [in, out], no `lm_head.weight` (tied), and in older files the
//   attention's mask buffers `h.N.attn.bias` / `h.N.attn.masked_bias` (not weights: ignored).
// The graph (gpt.ts) always uses nanoGPT's names and nn.Linear's [out, in]; this module maps a file onto them, checks
// it says everything at once, and maps trained weights back so PyTorch code loads them (writeGptStateDict).
import type { OpGraph } from "@attngraph/graph";
import { Tensor, formatShape, type AnyTensor } from "@attngraph/tensor";
import { ModelConfigError } from "./config-fields.js";
import type { GptShapes } from "./gpt-config.js";
import { isDecoderState, weightsFrom } from "./checkpoint-weights.js";
import { sameTensor, transposed } from "./state-dict-input.js";

export interface GptLayout {
  /** "nanogpt" (nn.Linear [out, in]) or "hf-gpt2" (Conv1D [in, out]). */
  readonly kind: "nanogpt" | "hf-gpt2";
  /** The key prefix of everything but lm_head: "transformer." or "". */
  readonly prefix: string;
  /** Whether the file has `lm_head.weight` (nanoGPT's state_dict does even when tied). */
  readonly hasLmHead: boolean;
  /** In words, for messages and notes: "Hugging Face GPT-2 layout (Conv1D weights [in, out], keys without `transformer.`)". */
  readonly description: string;
}

const CONV1D = /\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$/;
const BUFFER = /^(transformer\.)?h\.\d+\.attn\.(bias|masked_bias)$/;

/** Reads the layout and the shapes (sizes, bias, tie) off a checkpoint's keys, or says why it is not a GPT-2. */
export function detectGptLayout(sd: ReadonlyMap<string, AnyTensor>): { layout: GptLayout; shapes: GptShapes } {
  const prefix = sd.has("transformer.wte.weight") ? "transformer." : sd.has("wte.weight") ? "" : undefined;
  if (prefix === undefined)
    throw new ModelConfigError(
      "checkpoint",
      "not a GPT-2 / nanoGPT checkpoint: no token embedding",
      "a key transformer.wte.weight (nanoGPT) or wte.weight (Hugging Face GPT-2)",
      `keys ${[...sd.keys()].slice(0, 5).join(", ")}${sd.size > 5 ? ", …" : ""}`,
    );
  const wte = sd.get(`${prefix}wte.weight`)!;
  const wpe = sd.get(`${prefix}wpe.weight`);
  if (wte.shape.length !== 2)
    throw new ModelConfigError(
      `${prefix}wte.weight`,
      "the token embedding must be a table",
      "[vocab_size, n_embd]",
      formatShape(wte.shape),
    );
  const [vocabSize, nEmbd] = wte.shape as [number, number];
  if (wpe?.shape.length !== 2)
    throw new ModelConfigError(
      `${prefix}wpe.weight`,
      "the position embedding is missing or not a table",
      `[block_size, ${nEmbd}]`,
      wpe ? formatShape(wpe.shape) : "no such key",
    );
  const blocks = new Set<number>();
  for (const key of sd.keys()) {
    const m = key.startsWith(prefix) ? /^h\.(\d+)\./.exec(key.slice(prefix.length)) : null;
    if (m) blocks.add(Number(m[1]));
  }
  const nLayer = blocks.size === 0 ? 0 : Math.max(...blocks) + 1;
  if (nLayer === 0) throw new ModelConfigError("checkpoint", "no transformer block", `keys ${prefix}h.0.…`, "none");
  const cAttn = sd.get(`${prefix}h.0.attn.c_attn.weight`);
  const conv1d =
    cAttn !== undefined && cAttn.shape.length === 2 && cAttn.shape[0] === nEmbd && cAttn.shape[1] === 3 * nEmbd;
  const lmHead = sd.get("lm_head.weight");
  const tied = lmHead === undefined || sameTensor(lmHead, wte);
  const layout: GptLayout = {
    kind: conv1d ? "hf-gpt2" : "nanogpt",
    prefix,
    hasLmHead: lmHead !== undefined,
    description: conv1d
      ? `Hugging Face GPT-2 layout (Conv1D weights [in, out], keys ${prefix ? "with" : "without"} \`transformer.\`, ${lmHead ? "lm_head.weight present" : "lm_head tied to wte, absent"})`
      : `nanoGPT layout (nn.Linear weights [out, in], keys ${prefix ? "under" : "without"} \`transformer.\`, lm_head ${lmHead ? (tied ? "tied to wte" : "its own") : "tied to wte, absent"})`,
  };
  return {
    layout,
    shapes: { blockSize: wpe.shape[0]!, vocabSize, nLayer, nEmbd, bias: sd.has(`${prefix}h.0.attn.c_attn.bias`), tied },
  };
}

/** The file key of a graph weight (nanoGPT's name) in this layout. */
function fileKey(name: string, layout: GptLayout): string {
  return name.startsWith("transformer.") ? layout.prefix + name.slice("transformer.".length) : name;
}

/**
 * The graph's weights from the checkpoint: renamed, Conv1D weights transposed. Everything that does not fit is one
 * StateDictError naming every missing, unexpected and mis-shaped key by the file's own names, and the layout assumed.
 */
export function gptWeightsFrom(
  graph: OpGraph,
  sd: ReadonlyMap<string, AnyTensor>,
  layout: GptLayout,
  family: string,
): Record<string, Tensor> {
  // nanoGPT's state_dict holds lm_head.weight even when it is wte (one tensor, two names): the same values are fine.
  const tiedHead = layout.hasLmHead && !graph.weights.some((w) => w.name === "lm_head.weight");
  return weightsFrom(graph, sd, {
    keyOf: (name) => fileKey(name, layout),
    transposedInFile: (name) => layout.kind === "hf-gpt2" && CONV1D.test(name),
    ignorable: (key) => BUFFER.test(key) || (tiedHead && key === "lm_head.weight"),
    assumed: `${family} (${layout.description})`,
  });
}

/**
 * Trained weights (by the graph's names) back as the family's own state_dict: the layout's names, Conv1D weights
 * [in, out] again, lm_head.weight written beside wte when the layout has it (nanoGPT saves both), so PyTorch code
 * (GPT.load_state_dict, GPT2LMHeadModel.from_pretrained) loads the file as it loaded the original.
 */
export function gptStateDict(
  graph: OpGraph,
  weights: ReadonlyMap<string, AnyTensor> | Readonly<Record<string, AnyTensor>>,
  layout: GptLayout,
): Map<string, Tensor> {
  const get = (name: string) =>
    weights instanceof Map ? weights.get(name) : (weights as Record<string, AnyTensor>)[name];
  const out = new Map<string, Tensor>();
  for (const w of graph.weights) {
    if (isDecoderState(graph, w.name)) continue;
    const t = get(w.name);
    if (t === undefined)
      throw new ModelConfigError(`weights.${w.name}`, "a weight of the model is missing", "a tensor", "nothing");
    const conv = layout.kind === "hf-gpt2" && CONV1D.test(w.name);
    out.set(fileKey(w.name, layout), conv ? transposed(t) : Tensor.from(t.contiguous().data as Float32Array, t.shape));
  }
  const tied = !graph.weights.some((w) => w.name === "lm_head.weight");
  if (tied && layout.hasLmHead) out.set("lm_head.weight", out.get(fileKey("transformer.wte.weight", layout))!);
  return out;
}
