// One benchmark problem: the input and weights every implementation gets, from a seeded PRNG, so every run of the
// harness (and every implementation within a run) computes the same function on the same numbers.
import { mulberry32 } from "@attngraph/testkit/prng";
import type { BenchShape } from "./shapes.js";

// The project's one seeded generator (floats in [0, 1)); re-exported, as this module always exported it.
export { mulberry32 };

/**
 * Weights in PyTorch's nn.Linear layout (weight [out, in], y = x·Wᵀ + b), row-major float32; each implementation
 * converts them to the layout it prefers once, outside the timed region. No bias on Q/K/V (qkv_bias = False, as in the
 * worked examples); out_proj has a bias.
 */
export interface Problem {
  readonly kind: "attention";
  readonly shape: BenchShape;
  /** [b, T, d] */
  readonly x: Float32Array;
  /** [d, d] each */
  readonly wq: Float32Array;
  readonly wk: Float32Array;
  readonly wv: Float32Array;
  readonly wo: Float32Array;
  /** [d] */
  readonly bo: Float32Array;
  /** 1/sqrt(D), D = d / heads. */
  readonly scale: number;
}

/** x uniform in [-1, 1); weights and bias uniform in ±1/sqrt(d) (nn.Linear's default init range). */
export function makeProblem(shape: BenchShape, seed = 42): Problem {
  const rand = mulberry32(seed);
  const uniform = (n: number, bound: number) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = (rand() * 2 - 1) * bound;
    return a;
  };
  const { b, t, d, h } = shape;
  const k = 1 / Math.sqrt(d);
  return {
    kind: "attention",
    shape,
    x: uniform(b * t * d, 1),
    wq: uniform(d * d, k),
    wk: uniform(d * d, k),
    wv: uniform(d * d, k),
    wo: uniform(d * d, k),
    bo: uniform(d, k),
    scale: 1 / Math.sqrt(d / h),
  };
}

/**
 * Which computation a run benchmarks (`--problem`): the attention alone or a whole pre-norm transformer block (one
 * forward each), one training step (forward, backward and Adam) of the block (`train-block`) or of the worked
 * example's copy-task model (`train-copy`), or one decoding step of the attention over a KV cache (`decode`); `flex`,
 * attention variants as score and mask modifications, has its own problem, runner and report (src/flex/); so has
 * `gpt2`, a whole GPT-2 small model's prompts, tokens and generation (src/gpt2/).
 */
export type ProblemKind = "attention" | "block" | "train-block" | "train-copy" | "decode" | "flex" | "gpt2";
export const PROBLEM_KINDS: readonly ProblemKind[] = [
  "attention",
  "block",
  "train-block",
  "train-copy",
  "decode",
  "flex",
  "gpt2",
];

/** The training problems: one timed run is one optimizer step, and the check compares losses (see run.ts). */
export type TrainKind = "train-block" | "train-copy";
export function isTrainKind(kind: ProblemKind): kind is TrainKind {
  return kind === "train-block" || kind === "train-copy";
}

/**
 * The worked example's pre-norm transformer block (packages/nn/src/block.ts, shared/golden-train/FORMAT.md):
 *   ln1 = LayerNorm(x); attention = causal MHA(ln1) with a fused qkv_proj [3d, d] and out_proj [d, d], no biases;
 *   residual = x + attention; ln2 = LayerNorm(residual); mlp = mlp.2(GELU_erf(mlp.0(ln2))); output = residual + mlp.
 * LayerNorm: biased variance, eps 1e-5, affine. Weights in PyTorch's layouts, named in comments by their state_dict keys.
 */
export interface BlockProblem {
  readonly kind: "block";
  readonly shape: BenchShape;
  /** [b, T, d] */
  readonly x: Float32Array;
  /** ln1.weight, ln1.bias [d] */
  readonly ln1w: Float32Array;
  readonly ln1b: Float32Array;
  /** attention.qkv_proj.weight [3d, d]: rows 0..d-1 give q, d..2d-1 k, 2d..3d-1 v (PyTorch's split / chunk order). */
  readonly wqkv: Float32Array;
  /** attention.out_proj.weight [d, d] */
  readonly wo: Float32Array;
  /** ln2.weight, ln2.bias [d] */
  readonly ln2w: Float32Array;
  readonly ln2b: Float32Array;
  /** mlp.0.weight [4d, d], mlp.0.bias [4d] */
  readonly w1: Float32Array;
  readonly b1: Float32Array;
  /** mlp.2.weight [d, 4d], mlp.2.bias [d] */
  readonly w2: Float32Array;
  readonly b2: Float32Array;
  /** 1/sqrt(D), D = d / heads. */
  readonly scale: number;
  /** LayerNorm eps (1e-5). */
  readonly eps: number;
}

/** What an implementation is set up with: one of the five problems. */
export type BenchProblem = Problem | BlockProblem | TrainBlockProblem | TrainCopyProblem | DecodeProblem;

/** The MLP's hidden width: 4·d (mlpRatio 4, as in the worked example). */
export const MLP_RATIO = 4;

/**
 * The block's input and weights: x uniform in [-1, 1); Linear weights and biases uniform in ±1/sqrt(fan_in)
 * (nn.Linear's default init range). The LayerNorm affine parameters are drawn around PyTorch's init (weight 1 ± 0.2,
 * bias ± 0.1) rather than left at exactly 1 and 0, so that an implementation that drops or misplaces them shows up
 * in the checks.
 */
export function makeBlockProblem(shape: BenchShape, seed = 42): BlockProblem {
  const rand = mulberry32(seed);
  const uniform = (n: number, bound: number, centre = 0) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = centre + (rand() * 2 - 1) * bound;
    return a;
  };
  const { b, t, d, h } = shape;
  const hidden = MLP_RATIO * d;
  const k = 1 / Math.sqrt(d);
  const k2 = 1 / Math.sqrt(hidden);
  return {
    kind: "block",
    shape,
    x: uniform(b * t * d, 1),
    ln1w: uniform(d, 0.2, 1),
    ln1b: uniform(d, 0.1),
    wqkv: uniform(3 * d * d, k),
    wo: uniform(d * d, k),
    ln2w: uniform(d, 0.2, 1),
    ln2b: uniform(d, 0.1),
    w1: uniform(hidden * d, k),
    b1: uniform(hidden, k),
    w2: uniform(d * hidden, k2),
    b2: uniform(d, k2),
    scale: 1 / Math.sqrt(d / h),
    eps: 1e-5,
  };
}

/** A block's weights: what BlockProblem carries besides its input (shared by the training problems). */
export type BlockWeights = Omit<BlockProblem, "kind" | "shape" | "x" | "scale" | "eps">;

/**
 * The block's weights by PyTorch state_dict key (what `transformerBlock(...).weights` lists), `{ shape, data }`, each
 * name behind `prefix` (`"transformer."` inside the copy-task model).
 */
export function blockStateDict(
  p: BlockWeights & { readonly shape: BenchShape },
  prefix = "",
): Record<string, { shape: number[]; data: Float32Array }> {
  const d = p.shape.d;
  const hidden = MLP_RATIO * d;
  const entries: [string, number[], Float32Array][] = [
    ["ln1.weight", [d], p.ln1w],
    ["ln1.bias", [d], p.ln1b],
    ["attention.qkv_proj.weight", [3 * d, d], p.wqkv],
    ["attention.out_proj.weight", [d, d], p.wo],
    ["ln2.weight", [d], p.ln2w],
    ["ln2.bias", [d], p.ln2b],
    ["mlp.0.weight", [hidden, d], p.w1],
    ["mlp.0.bias", [hidden], p.b1],
    ["mlp.2.weight", [d, hidden], p.w2],
    ["mlp.2.bias", [d], p.b2],
  ];
  return Object.fromEntries(entries.map(([name, shape, data]) => [prefix + name, { shape, data }]));
}

/** Adam's learning rate of both training problems (betas 0.9, 0.999 and eps 1e-8: torch.optim.Adam's defaults). */
export const TRAIN_LR = 1e-3;
export const ADAM_BETAS = [0.9, 0.999] as const;
export const ADAM_EPS = 1e-8;

/**
 * `--problem train-block`: one training step of the block. The block's output is not a scalar, so the step minimises
 * L = sum(output ⊙ gradOutput) for a fixed gradOutput (the upstream gradient a following layer would send back):
 * every parameter's gradient is then exactly the block's vector-Jacobian product with gradOutput, and the step's
 * result is L before the update. Input and weights are the block problem's (same seed, same draws), gradOutput is
 * uniform in [-1, 1) from its own seeded stream. Every parameter (all ten) is trained with Adam, lr TRAIN_LR.
 */
export interface TrainBlockProblem extends Omit<BlockProblem, "kind"> {
  readonly kind: "train-block";
  /** [b, T, d]: ∂L/∂output. */
  readonly gradOutput: Float32Array;
  readonly lr: number;
}

export function makeTrainBlockProblem(shape: BenchShape, seed = 42): TrainBlockProblem {
  const block = makeBlockProblem(shape, seed);
  const rand = mulberry32(seed + 1);
  const gradOutput = new Float32Array(block.x.length);
  for (let i = 0; i < gradOutput.length; i++) gradOutput[i] = rand() * 2 - 1;
  return { ...block, kind: "train-block", gradOutput, lr: TRAIN_LR };
}

/**
 * The worked example's copy-task model and batch (packages/nn simpleTransformer(config, { loss: true }),
 * ../shared/golden-train/FORMAT.md): vocabulary 10, embedding 32, 4 heads, sequence 8, one block; batch 32. The shape
 * of `--problem train-copy` is fixed to it (b=32, T=8, d=32, heads=4); `--shape` does not apply.
 */
export const COPY_VOCAB = 10;
export const COPY_SHAPE: BenchShape = Object.freeze({ b: 32, t: 8, d: 32, h: 4 });

/**
 * `--problem train-copy`: one training step of the copy-task model: tokens [b, T] int32 → embed.weight[tokens] +
 * pos_embed → the pre-norm block (causal) → output Linear(E, V) → logits; loss = mean cross-entropy of the logits
 * against targets = tokens over all b·T positions. Adam, lr TRAIN_LR, on all 14 parameters.
 */
export interface TrainCopyProblem {
  readonly kind: "train-copy";
  readonly shape: BenchShape;
  readonly vocab: number;
  /** [b, T] in [0, vocab); the targets are the tokens (the copy task). */
  readonly tokens: Int32Array;
  /** embed.weight [V, E] */
  readonly embed: Float32Array;
  /** pos_embed [1, T, E] */
  readonly pos: Float32Array;
  /** The block's weights, state_dict names under `transformer.`. */
  readonly block: BlockWeights;
  /** output.weight [V, E], output.bias [V] */
  readonly wOut: Float32Array;
  readonly bOut: Float32Array;
  readonly scale: number;
  readonly eps: number;
  readonly lr: number;
}

/**
 * The copy task's batch and initial weights, seeded: tokens uniform in [0, V); embed.weight and pos_embed N(0, 1) (as
 * nn.Embedding and torch.randn make them); the block's weights drawn as makeBlockProblem draws them; output like
 * nn.Linear (uniform ±1/√E).
 */
export function makeTrainCopyProblem(seed = 42): TrainCopyProblem {
  const shape = COPY_SHAPE;
  const { b, t, d } = shape;
  const V = COPY_VOCAB;
  const rand = mulberry32(seed + 2);
  const normal = (n: number) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()); // Box–Muller
    return a;
  };
  const tokens = new Int32Array(b * t);
  for (let i = 0; i < tokens.length; i++) tokens[i] = Math.min(V - 1, Math.floor(rand() * V));
  const embed = normal(V * d);
  const pos = normal(t * d);
  const k = 1 / Math.sqrt(d);
  const wOut = Float32Array.from({ length: V * d }, () => (rand() * 2 - 1) * k);
  const bOut = Float32Array.from({ length: V }, () => (rand() * 2 - 1) * k);
  const { kind: _kind, shape: _shape, x: _x, scale, eps, ...block } = makeBlockProblem(shape, seed);
  return { kind: "train-copy", shape, vocab: V, tokens, embed, pos, block, wOut, bOut, scale, eps, lr: TRAIN_LR };
}

/** The copy-task model's weights by state_dict key (what `simpleTransformer(...).weights` lists). */
export function copyStateDict(p: TrainCopyProblem): Record<string, { shape: number[]; data: Float32Array }> {
  const { t, d } = p.shape;
  return {
    "embed.weight": { shape: [p.vocab, d], data: p.embed },
    pos_embed: { shape: [1, t, d], data: p.pos },
    ...blockStateDict({ ...p.block, shape: p.shape }, "transformer."),
    "output.weight": { shape: [p.vocab, d], data: p.wOut },
    "output.bias": { shape: [p.vocab], data: p.bOut },
  };
}

/**
 * `--problem decode`: one step of incremental decoding with the attention problem's computation (causal MHA, out_proj
 * with bias, no Q/K/V bias). The shape's T is the cache length: a prompt of T positions has been seen, and one new
 * token [b, 1, d] attends over the T cached positions and itself (T + 1 keys). One run's output is [b, 1, d]: the
 * last row of the causal attention over [prompt; token].
 */
export interface DecodeProblem extends Omit<Problem, "kind" | "x"> {
  readonly kind: "decode";
  /** [b, T, d]: what the cache holds the keys and values of (projected once, outside the timed region). */
  readonly prompt: Float32Array;
  /** [b, 1, d]: the new token of every timed run. */
  readonly token: Float32Array;
}

/**
 * The attention problem at `shape` with its x as the prompt (same draws, so the weights are the attention problem's),
 * and the new token uniform in [-1, 1) from its own seeded stream.
 */
export function makeDecodeProblem(shape: BenchShape, seed = 42): DecodeProblem {
  const { kind: _kind, x, ...rest } = makeProblem(shape, seed);
  const rand = mulberry32(seed + 3);
  const token = Float32Array.from({ length: shape.b * shape.d }, () => rand() * 2 - 1);
  return { ...rest, kind: "decode", prompt: x, token };
}

/** The problem `--problem` asks for, at one shape (train-copy has its own, fixed shape and ignores `shape`). */
export function makeBenchProblem(kind: ProblemKind, shape: BenchShape, seed = 42): BenchProblem {
  switch (kind) {
    case "block":
      return makeBlockProblem(shape, seed);
    case "train-block":
      return makeTrainBlockProblem(shape, seed);
    case "train-copy":
      return makeTrainCopyProblem(seed);
    case "decode":
      return makeDecodeProblem(shape, seed);
    case "flex":
      throw new Error("--problem flex has its own problem: makeFlexProblem (src/flex/problem.ts)");
    case "gpt2":
      throw new Error("--problem gpt2 has its own problem: makeGpt2Problem (src/gpt2/problem.ts)");
    default:
      return makeProblem(shape, seed);
  }
}

/** Transposes a row-major [rows, cols] matrix into a new [cols, rows] one. */
export function transpose2d(m: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = m[r * cols + c]!;
  return out;
}

/** The additive causal mask [T, T]: 0 where key j <= query i, −∞ above the diagonal. */
export function causalMask(t: number): Float32Array {
  const m = new Float32Array(t * t);
  for (let i = 0; i < t; i++) for (let j = i + 1; j < t; j++) m[i * t + j] = -Infinity;
  return m;
}
