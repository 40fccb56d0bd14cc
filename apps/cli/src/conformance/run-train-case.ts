// Runs a golden-train case (shared/golden-train/FORMAT.md) forward, through the same path a user takes: the nn
// builders for the worked example's modules, weights loaded by their PyTorch state_dict names, compile, tap, run,
// compare. What needs gradients or a training loop (expectedGrad; a train case's losses, finalLogits, finalWeights)
// is not checked yet: it is named on the case's line, and the case passes or fails on what was compared.
import { buildAttention } from "@attngraph/attention";
import type { OpGraph } from "@attngraph/graph";
import { PYTORCH_ATTENTION_WEIGHTS, loadStateDict, simpleTransformer, transformerBlock, type BlockConfigInput } from "@attngraph/nn";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import type { TrainCase } from "@attngraph/testkit";
import { gradientsNotChecked, runGraphCase, type CaseResult, type RunCaseOptions } from "./run-case.js";

/** Expected tensors of each kind that the forward pass produces, by the node that produces them (others: not checked). */
const FORWARD: Readonly<Record<TrainCase["kind"], Readonly<Record<string, string>>>> = {
  // The block's nodes carry the example's names; its attention weights are `attention.weights`.
  block: { ln1: "ln1", attention: "attention", weights: "attention.weights", residual: "residual", ln2: "ln2", "mlp.hidden": "mlp.hidden", "mlp.gelu": "mlp.gelu", mlp: "mlp", output: "output" },
  "mha-backward": { output: "output", weights: "weights" },
  // The logits at step 0 are the forward pass on the first batchSize samples with the initial parameters.
  train: { logits: "output" },
};

export async function runTrainCase(c: TrainCase, options: RunCaseOptions): Promise<CaseResult> {
  const base = { file: c.file, name: c.name };
  try {
    const { graph, inputs } = build(c);
    const forward = FORWARD[c.kind];
    const expected = Object.entries(c.expected).flatMap(([name, tensor]) => (Object.hasOwn(forward, name) ? [{ name, node: forward[name]!, tensor }] : []));
    const notChecked = [...Object.keys(c.expected).filter((n) => !Object.hasOwn(forward, n)), ...gradientsNotChecked(Object.keys(c.expectedGrad))];
    return await runGraphCase({ ...base, graph, weights: () => loadStateDict(graph, c.params), inputs, expected, tolerance: c.tolerance, notChecked }, options);
  } catch (e) {
    return { ...base, ok: false, checks: [], error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e) };
  }
}

/** The graph of a case's kind, its weights loaded by state_dict name, and the inputs of its forward run (`attngraph run`). */
export function buildTrainCase(c: TrainCase): { graph: OpGraph; weights: Record<string, AnyTensor>; inputs: Record<string, AnyTensor> } {
  const built = build(c);
  return { ...built, weights: loadStateDict(built.graph, c.params) };
}

/** The graph of a case's kind and the inputs of its forward run. */
function build(c: TrainCase): { graph: OpGraph; inputs: Record<string, AnyTensor> } {
  const cfg = c.config;
  const num = (key: string): number => {
    const v = cfg[key];
    if (typeof v !== "number") throw new AttnGraphError("case-format", `${c.file}: $.config.${key}: missing or not a number`, { subject: `${c.file}: $.config.${key}` });
    return v;
  };
  const mask = c.inputs["mask"];
  switch (c.kind) {
    case "block": {
      const graph = transformerBlock(blockConfig(c), { mask: mask !== undefined });
      return { graph, inputs: pick(c, ["x", ...(mask ? ["mask"] : [])]) };
    }
    case "mha-backward": {
      const E = num("embedDim");
      const graph = buildAttention(
        { dIn: E, dOut: E, numHeads: num("nHeads"), qkvBias: false, outProj: true, outBias: false },
        { fusedQkv: true, weightNames: PYTORCH_ATTENTION_WEIGHTS, ...(mask ? { userMask: "mask" as const } : {}) },
      );
      return { graph, inputs: pick(c, ["x", ...(mask ? ["mask"] : [])]) };
    }
    case "train": {
      const graph = simpleTransformer({ ...blockConfig(c), vocabSize: num("vocabSize"), seqLen: num("seqLen"), blocks: num("blocks"), dropout: num("dropout") });
      const tokens = c.inputs["tokens"];
      if (!tokens || tokens.dtype !== "int32") throw new AttnGraphError("case-format", `${c.file}: $.inputs.tokens: missing int32 tokens`, { subject: `${c.file}: $.inputs.tokens` });
      const n = c.training!.batchSize;
      const rows = tokens.shape[1]!;
      return { graph, inputs: { tokens: Tensor.int32(tokens.toInt32Array().subarray(0, n * rows), [n, rows]) } };
    }
  }
}

function blockConfig(c: TrainCase): BlockConfigInput {
  const cfg = c.config;
  return {
    embedDim: cfg["embedDim"] as number,
    nHeads: cfg["nHeads"] as number,
    ...(cfg["mlpRatio"] === undefined ? {} : { mlpRatio: cfg["mlpRatio"] as number }),
    ...(cfg["layerNormEps"] === undefined ? {} : { layerNormEps: cfg["layerNormEps"] as number }),
    ...(cfg["gelu"] === undefined ? {} : { gelu: cfg["gelu"] as "erf" | "tanh" }),
  };
}

function pick(c: TrainCase, names: readonly string[]): Record<string, AnyTensor> {
  const out: Record<string, AnyTensor> = {};
  for (const n of names) {
    const t = c.inputs[n];
    if (!t) throw new AttnGraphError("case-format", `${c.file}: $.inputs.${n}: missing input`, { subject: `${c.file}: $.inputs.${n}` });
    out[n] = t;
  }
  return out;
}
