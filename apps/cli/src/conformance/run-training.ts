// The training part of a golden-train `train` case: the worked example's loop through @attngraph/train (Adam, every
// step on the first batchSize samples), then a forward pass of sample 0 with the trained parameters. Compares the
// losses of every step, the final logits and each block's final attention weights (shared/golden-train/FORMAT.md).
import type { Executor } from "@attngraph/graph";
import { blockName, simpleTransformer, loadStateDict } from "@attngraph/nn";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, Tensor, compare, type AnyTensor } from "@attngraph/tensor";
import type { TrainCase } from "@attngraph/testkit";
import { adam, createTrainer } from "@attngraph/train";
import type { TensorCheck } from "./run-case.js";

/** The expected tensors this part checks. */
export const TRAINING_RESULTS = ["losses", "finalLogits", "finalWeights"] as const;

export function isTrainingResult(name: string): boolean {
  return name === "losses" || name === "finalLogits" || name === "finalWeights" || /^finalWeights\.\d+$/.test(name);
}

/** The first n rows of an int32 input of the case. */
function firstRows(c: TrainCase, name: string, n: number): Tensor<"int32"> {
  const t = c.inputs[name];
  if (t?.dtype !== "int32")
    throw new AttnGraphError("case-format", `${c.file}: $.inputs.${name}: missing int32 ${name}`, {
      subject: `${c.file}: $.inputs.${name}`,
    });
  return Tensor.int32(t.toInt32Array().subarray(0, n * t.shape[1]!), [n, t.shape[1]!]);
}

/**
 * Trains as the case says and compares what it expects of training. `tap: "none"` compares only what comes back as
 * outputs (losses, final logits); the final weights are then named as not compared.
 */
export async function checkTraining(
  c: TrainCase,
  executors: readonly Executor[],
  tap: "expected" | "all" | "none",
): Promise<{ checks: TensorCheck[]; notCompared: string[] }> {
  const spec = c.training;
  if (!spec)
    throw new AttnGraphError("case-format", `${c.file}: $.training: a train case needs its training spec`, {
      subject: `${c.file}: $.training`,
    });
  const cfg = c.config as Record<string, unknown>;
  const config = {
    vocabSize: cfg["vocabSize"] as number,
    embedDim: cfg["embedDim"] as number,
    nHeads: cfg["nHeads"] as number,
    seqLen: cfg["seqLen"] as number,
    ...(cfg["blocks"] === undefined ? {} : { blocks: cfg["blocks"] as number }),
    ...(cfg["mlpRatio"] === undefined ? {} : { mlpRatio: cfg["mlpRatio"] as number }),
    ...(cfg["layerNormEps"] === undefined ? {} : { layerNormEps: cfg["layerNormEps"] as number }),
    ...(cfg["gelu"] === undefined ? {} : { gelu: cfg["gelu"] as "erf" | "tanh" }),
    ...(cfg["dropout"] === undefined ? {} : { dropout: cfg["dropout"] as number }),
  };
  const graph = simpleTransformer(config, { loss: true });
  const trainer = await createTrainer(graph, {
    loss: "loss",
    optimizer: adam({ lr: spec.lr, betas: spec.betas, eps: spec.eps, weightDecay: spec.weightDecay }),
    executors,
    weights: loadStateDict(graph, c.params),
  });
  const losses: number[] = [];
  let params: Map<string, AnyTensor>;
  try {
    const batch = { tokens: firstRows(c, "tokens", spec.batchSize), targets: firstRows(c, "targets", spec.batchSize) };
    for (let i = 0; i < spec.steps; i++) losses.push(await trainer.step(batch));
    params = await trainer.parameters();
  } finally {
    await trainer.dispose();
  }

  const got = new Map<string, Tensor>([["losses", Tensor.from(losses, [losses.length])]]);
  const blocks = (config.blocks as number | undefined) ?? 1;
  const wanted = Object.keys(c.expected).filter(isTrainingResult);
  const weightNodes = new Map(
    Array.from(
      { length: blocks },
      (_, i) =>
        [blocks === 1 ? "finalWeights" : `finalWeights.${i}`, `${blockName(i, blocks)}.attention.weights`] as const,
    ),
  );
  if (wanted.some((n) => n !== "losses")) {
    // Sample 0 forward with the trained parameters: its logits, and each block's attention weights through a tap.
    const forward = simpleTransformer(config);
    const session = await compile(forward, { executors, weights: Object.fromEntries(params) });
    const taps = tap === "none" ? [] : wanted.filter((n) => weightNodes.has(n)).map((n) => weightNodes.get(n)!);
    const seen = new Map<string, Tensor>();
    const sub = taps.length ? session.tap(taps).subscribe((e) => seen.set(e.node, e.tensor)) : undefined;
    try {
      const out = await session.run({ tokens: firstRows(c, "tokens", 1) });
      got.set("finalLogits", out["output"]!);
      for (const [name, node] of weightNodes) if (seen.has(node)) got.set(name, seen.get(node)!);
    } finally {
      sub?.unsubscribe();
      await session.dispose();
    }
  }
  const checks: TensorCheck[] = [];
  const notCompared: string[] = [];
  for (const name of wanted) {
    const exp = c.expected[name]!;
    const t = got.get(name);
    if (!t) {
      if (tap === "none" && weightNodes.has(name)) notCompared.push(name);
      else
        checks.push({
          name,
          ok: false,
          failures: exp.size,
          size: exp.size,
          worst: undefined,
          problem: "nothing produced it (a block that does not exist?)",
        });
      continue;
    }
    const r = compare(t, exp, c.tolerance);
    checks.push({
      name,
      ok: r.ok,
      failures: r.failures,
      size: exp.size,
      worst: r.worst,
      ...(r.shapeMismatch ? { problem: r.shapeMismatch } : {}),
    });
  }
  return { checks, notCompared };
}
