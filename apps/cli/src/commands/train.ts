// `attngraph train copy`: the worked example's training loop. SimpleTransformer (vocab 10, embed 32, 4 heads, 8 tokens)
// learns to copy 100 random sequences with Adam, every step on the first 32 as the example does; the loss is printed
// every 10 steps, then each head's attention pattern of sample 0. `--init <golden-train case>` starts from that case's
// parameters (and data), so the losses are PyTorch's.
import { defaultInit, loadStateDict, simpleTransformer } from "@attngraph/nn";
import { compile } from "@attngraph/runtime";
import { clip, Tensor, type AnyTensor } from "@attngraph/tensor";
import { mulberry32, type TrainCase } from "@attngraph/testkit";
import { adam, createTrainer } from "@attngraph/train";
import { caseOf, expectKind, readDocument } from "../document.js";
import { executorsFor } from "../executors.js";
import { refuseFlags, type CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";

export const trainHelp = `train copy options:
  --steps <n>        Adam steps (default 50)       --lr <x>        learning rate (default 0.001)
  --seed <n>         data, initial weights and dropout masks (default 3; --init brings its own data and weights)
  --dropout <x>      attention dropout, a new mask every step (default 0; the worked example trains without)
  --init <case.json> start from a golden-train "train" case: its config, parameters, data, batch and optimizer
                     (--lr still overrides), so the printed losses are PyTorch's
Exits 1 if the loss is not finite or did not fall.`;

export const trainCommand: CommandLine = {
  flags: ["executor", "threads", "steps", "lr", "seed", "dropout", "init"],
  operand: "task (copy)",
};

const V = 10,
  E = 32,
  H = 4,
  T = 8,
  SAMPLES = 100,
  BATCH = 32;

export interface TrainArgs {
  readonly positionals: readonly string[];
  readonly executor: string;
  /** The wasm executor's threads (`--threads`). */
  readonly threads?: number | undefined;
  readonly steps?: string;
  readonly lr?: string;
  readonly seed?: string;
  readonly dropout?: string;
  readonly init?: string;
}

function number(
  flag: string,
  raw: string | undefined,
  dflt: number,
  ok: (v: number) => boolean,
  expected: string,
): number {
  if (raw === undefined) return dflt;
  const v = Number(raw);
  if (!Number.isFinite(v) || !ok(v)) throw new UsageError(`--${flag}: expected ${expected}, got "${clip(raw, 40)}"`);
  return v;
}

/** Sequences of random tokens (targets = tokens): the copy task's data, from a seed. */
function copyData(seed: number): Tensor<"int32"> {
  const next = mulberry32(seed);
  return Tensor.int32(
    Array.from({ length: SAMPLES * T }, () => Math.floor(next() * V)),
    [SAMPLES, T],
  );
}

const firstRows = (t: AnyTensor, n: number) =>
  Tensor.int32(t.toInt32Array().subarray(0, n * t.shape[1]!), [n, t.shape[1]!]);

/** A head's [T, T] weights as the worked example prints them: one row per query, a shade per weight, then the numbers. */
export function asciiPattern(weights: Float32Array, T: number): string[] {
  const shades = " .:-=+*#%@";
  const lines = [`      ${Array.from({ length: T }, (_, j) => String(j).padStart(2)).join("")}`];
  for (let i = 0; i < T; i++) {
    const row = weights.subarray(i * T, (i + 1) * T);
    const cells = Array.from(row, (w) => ` ${shades[Math.min(9, Math.floor(w * 10))]!}`).join("");
    lines.push(`  q${i}  ${cells}   ${Array.from(row, (w) => w.toFixed(2)).join(" ")}`);
  }
  return lines;
}

export async function train(args: TrainArgs, io: IO): Promise<number> {
  const [task, ...extra] = args.positionals;
  if (task !== "copy" || extra.length)
    throw new UsageError(`train: the one task is "copy" (attngraph train copy)\n${trainHelp}`);
  const steps = number("steps", args.steps, 50, (v) => Number.isInteger(v) && v >= 1, "an integer >= 1");
  const lr = number("lr", args.lr, 1e-3, (v) => v > 0, "a number > 0");
  const seed = number("seed", args.seed, 3, (v) => Number.isInteger(v) && v >= 0, "an integer >= 0");
  const dropout = number("dropout", args.dropout, 0, (v) => v >= 0 && v < 1, "a number in [0, 1)");
  let config: { vocabSize: number; embedDim: number; nHeads: number; seqLen: number } & ReturnType<typeof modelExtras> =
    { vocabSize: V, embedDim: E, nHeads: H, seqLen: T };
  let optimizer: { lr: number; betas: readonly [number, number]; eps: number; weightDecay: number } = {
    lr,
    betas: [0.9, 0.999],
    eps: 1e-8,
    weightDecay: 0,
  };
  let batchSize = BATCH;
  let weights: Record<string, AnyTensor> | undefined;
  let tokens: AnyTensor;
  let targets: AnyTensor;
  let origin: string;
  if (args.init !== undefined) {
    // The case brings data and weights; the seed still seeds dropout's masks when there is dropout.
    if (dropout === 0)
      refuseFlags("train", "with --init: the data and the initial weights come from the case", { "--seed": args.seed });
    const doc = readDocument(args.init, "--init");
    expectKind(doc, "train --init", ["case"]);
    const loaded = caseOf(doc);
    const c = loaded.case as TrainCase;
    if (loaded.format !== "train" || c.kind !== "train" || !c.training)
      throw new UsageError(`--init: ${clip(args.init)} is not a golden-train "train" case`);
    const cfg = c.config as Record<string, number>;
    config = {
      vocabSize: cfg["vocabSize"]!,
      embedDim: cfg["embedDim"]!,
      nHeads: cfg["nHeads"]!,
      seqLen: cfg["seqLen"]!,
    };
    const t = c.training;
    optimizer = { lr: args.lr === undefined ? t.lr : lr, betas: t.betas, eps: t.eps, weightDecay: t.weightDecay };
    batchSize = t.batchSize;
    const [tk, tg] = [c.inputs["tokens"], c.inputs["targets"]];
    if (!tk || !tg || tk.dtype !== "int32" || tg.dtype !== "int32")
      throw new UsageError(`--init: ${clip(args.init)} has no int32 inputs tokens and targets`);
    tokens = tk;
    targets = tg;
    origin = `config, parameters, data and Adam settings of ${c.name}`;
    config = { ...config, ...modelExtras(cfg) };
    weights = loadStateDict(simpleTransformer(config, { loss: true }), c.params);
  } else {
    tokens = copyData(seed);
    targets = tokens; // the copy task
    origin = `PyTorch-style random init and data from seed ${seed}`;
  }
  // Dropout drops attention weights in training only (new masks every step); the forward pass below is eval.
  const graph = simpleTransformer({ ...config, dropout }, { loss: true, training: dropout > 0, seed });
  weights ??= defaultInit(graph, seed);
  const batch = { tokens: firstRows(tokens, batchSize), targets: firstRows(targets, batchSize) };
  const executors = executorsFor(args.executor, undefined, { threads: args.threads });
  const { vocabSize, embedDim, nHeads, seqLen } = config;
  io.out(
    `attngraph train copy: SimpleTransformer (vocab ${vocabSize}, embed ${embedDim}, ${nHeads} heads, ${seqLen} tokens), Adam lr ${optimizer.lr}, ${steps} steps on the first ${batchSize} of ${tokens.shape[0]} samples`,
  );
  io.out(`${origin}; executor: ${clip(args.executor)}\n`);
  const trainer = await createTrainer(graph, { loss: "loss", optimizer: adam(optimizer), executors, weights });
  let first = Number.NaN;
  let last = Number.NaN;
  try {
    for (let s = 1; s <= steps; s++) {
      last = await trainer.step(batch);
      if (s === 1) first = last;
      if (s === 1 || s % 10 === 0 || s === steps) io.out(`step ${String(s).padStart(3)}  loss ${last.toFixed(4)}`);
    }
    const trained = await trainer.parameters();
    // Sample 0 through the trained model, its attention weights from the stream.
    const forward = simpleTransformer(config);
    const session = await compile(forward, { executors, weights: Object.fromEntries(trained) });
    let pattern: Tensor | undefined;
    const sub = session.tap("transformer.attention.weights").subscribe((e) => (pattern = e.tensor));
    const out = await session.run({ tokens: firstRows(tokens, 1) });
    sub.unsubscribe();
    await session.dispose();
    const logits = out["output"]!.toFloat32Array();
    const predicted = Array.from({ length: seqLen }, (_, t) =>
      logits.subarray(t * vocabSize, (t + 1) * vocabSize).reduce((best, v, i, row) => (v > row[best]! ? i : best), 0),
    );
    io.out(`\nsample 0   tokens ${Array.from(firstRows(tokens, 1).toInt32Array()).join(" ")}`);
    io.out(`       predicted ${predicted.join(" ")}`);
    const w = pattern!.toFloat32Array();
    for (let h = 0; h < nHeads; h++) {
      io.out(`\nhead ${h} attention of sample 0 (row: query position, column: key position)`);
      for (const line of asciiPattern(w.subarray(h * seqLen * seqLen, (h + 1) * seqLen * seqLen), seqLen)) io.out(line);
    }
  } finally {
    await trainer.dispose();
  }
  io.out(`\nfinal loss ${last.toFixed(4)}`);
  // A run that learned nothing (or blew up) is a failure, so CI notices it on every executor.
  if (!Number.isFinite(last) || !(steps === 1 || last < first)) {
    io.err(`attngraph: train copy: the loss did not fall (first ${first}, last ${last})`);
    return 1;
  }
  return 0;
}

/** The model settings beyond the four main ones that a case's config may give. */
function modelExtras(cfg: Record<string, unknown>): {
  blocks?: number;
  mlpRatio?: number;
  layerNormEps?: number;
  gelu?: "erf" | "tanh";
} {
  return {
    ...(typeof cfg["blocks"] === "number" ? { blocks: cfg["blocks"] } : {}),
    ...(typeof cfg["mlpRatio"] === "number" ? { mlpRatio: cfg["mlpRatio"] } : {}),
    ...(typeof cfg["layerNormEps"] === "number" ? { layerNormEps: cfg["layerNormEps"] } : {}),
    ...(cfg["gelu"] === "erf" || cfg["gelu"] === "tanh" ? { gelu: cfg["gelu"] } : {}),
  };
}
