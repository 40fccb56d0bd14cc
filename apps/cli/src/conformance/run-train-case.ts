// Runs a golden-train case (shared/golden-train/FORMAT.md) forward, through the same path a user takes: the nn
// builders for the worked example's modules, weights loaded by their PyTorch state_dict names, compile, tap, run,
// compare. Gradients (expectedGrad) are checked on the same run through grad(): of L = sum(output ⊙ gradOutput) for the
// block and attention kinds, of the mean cross-entropy at step 0 for a train case. A train case's training results
// (losses of every step, final logits and attention weights) come from its loop through @attngraph/train
// (run-training.ts).
import { buildAttention } from "@attngraph/attention";
import type { OpGraph } from "@attngraph/graph";
import {
  PYTORCH_ATTENTION_WEIGHTS,
  loadStateDict,
  simpleTransformer,
  transformerBlock,
  type BlockConfigInput,
} from "@attngraph/nn";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import { TRAIN_FORWARD_NODES as FORWARD, type TrainCase } from "@attngraph/testkit";
import { runGraphCase, type CaseResult, type GraphCase, type RunCaseOptions } from "./run-case.js";
import { checkTraining, isTrainingResult } from "./run-training.js";

export async function runTrainCase(c: TrainCase, options: RunCaseOptions): Promise<CaseResult> {
  const base = { file: c.file, name: c.name };
  try {
    const training = c.kind === "train" ? Object.keys(c.expected).filter(isTrainingResult) : [];
    const step0 = await runGraphCase(trainGraphCase(c), options);
    // Step 0 compared nothing (no logits or gradients expected): the training results alone decide the case.
    const onlyTraining = step0.checks.length === 0 && step0.error?.startsWith("nothing to compare") === true;
    if (training.length === 0 || (step0.error && !onlyTraining)) return step0;
    const trained = await checkTraining(c, options.executors, options.tap ?? "expected");
    const checks = [...step0.checks, ...trained.checks];
    const notCompared = [...(step0.notCompared ?? []), ...trained.notCompared];
    const { error: _none, ...rest } = step0;
    return {
      ...rest,
      ok: checks.length > 0 && checks.every((k) => k.ok),
      checks,
      ...(notCompared.length ? { notCompared } : {}),
    };
  } catch (e) {
    return {
      ...base,
      ok: false,
      checks: [],
      error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e),
    };
  }
}

/**
 * A golden-train case's step 0 as a graph case: the forward graph of its kind (with the loss when gradients are
 * expected), its parameters, the forward tensors it expects and the gradients. Training results are not part of it.
 */
export function trainGraphCase(c: TrainCase): GraphCase {
  const { graph, inputs } = build(c, { loss: Object.keys(c.expectedGrad).length > 0 });
  const forward = FORWARD[c.kind];
  const expected = Object.entries(c.expected).flatMap(([name, tensor]) =>
    Object.hasOwn(forward, name) ? [{ name, node: forward[name]!, tensor }] : [],
  );
  const training = c.kind === "train" ? Object.keys(c.expected).filter(isTrainingResult) : [];
  const notChecked = Object.keys(c.expected).filter((n) => !Object.hasOwn(forward, n) && !training.includes(n));
  const gradients = gradientsOf(c, graph);
  return {
    file: c.file,
    name: c.name,
    graph,
    weights: () => loadStateDict(graph, c.params),
    inputs,
    expected,
    tolerance: c.tolerance,
    notChecked,
    ...(gradients ? { gradients } : {}),
  };
}

/**
 * The gradients a case expects, by the graph's value names (its state_dict names and `x`). The block and attention
 * kinds differentiate their output against `gradOutput`; a train case its mean cross-entropy (`loss`), a scalar.
 */
function gradientsOf(c: TrainCase, _graph: OpGraph): GraphCase["gradients"] | undefined {
  const expected = Object.entries(c.expectedGrad).map(([wrt, tensor]) => ({ name: `grad ${wrt}`, wrt, tensor }));
  if (expected.length === 0) return undefined;
  if (c.kind === "train") return { loss: "loss", expected };
  const seed = c.inputs["gradOutput"];
  if (seed?.dtype !== "float32")
    throw new AttnGraphError("case-format", `${c.file}: $.inputs.gradOutput: expectedGrad needs a float tensor here`, {
      subject: `${c.file}: $.inputs.gradOutput`,
    });
  return { loss: "output", seed: seed as Tensor, expected };
}

/** The graph of a case's kind, its weights loaded by state_dict name, and the inputs of its forward run (`attngraph run`). */
export function buildTrainCase(c: TrainCase): {
  graph: OpGraph;
  weights: Record<string, AnyTensor>;
  inputs: Record<string, AnyTensor>;
} {
  const built = build(c);
  return { ...built, weights: loadStateDict(built.graph, c.params) };
}

/** The graph of a case's kind and the inputs of its forward run; with `loss`, a train case's graph also takes targets. */
function build(c: TrainCase, options: { loss?: boolean } = {}): { graph: OpGraph; inputs: Record<string, AnyTensor> } {
  const cfg = c.config;
  const num = (key: string): number => {
    const v = cfg[key];
    if (typeof v !== "number")
      throw new AttnGraphError("case-format", `${c.file}: $.config.${key}: missing or not a number`, {
        subject: `${c.file}: $.config.${key}`,
      });
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
      const loss = options.loss === true;
      const graph = simpleTransformer(
        {
          ...blockConfig(c),
          vocabSize: num("vocabSize"),
          seqLen: num("seqLen"),
          blocks: num("blocks"),
          dropout: num("dropout"),
        },
        { loss },
      );
      const n = c.training!.batchSize;
      // Every step trains on the first batchSize samples (the worked example's loop).
      const firstRows = (name: string) => {
        const t = c.inputs[name];
        if (t?.dtype !== "int32")
          throw new AttnGraphError("case-format", `${c.file}: $.inputs.${name}: missing int32 ${name}`, {
            subject: `${c.file}: $.inputs.${name}`,
          });
        return Tensor.int32(t.toInt32Array().subarray(0, n * t.shape[1]!), [n, t.shape[1]!]);
      };
      return { graph, inputs: { tokens: firstRows("tokens"), ...(loss ? { targets: firstRows("targets") } : {}) } };
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
    if (!t)
      throw new AttnGraphError("case-format", `${c.file}: $.inputs.${n}: missing input`, {
        subject: `${c.file}: $.inputs.${n}`,
      });
    out[n] = t;
  }
  return out;
}
