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

/** Which computation a run benchmarks (`--problem`): the attention alone, or a whole pre-norm transformer block. */
export type ProblemKind = "attention" | "block";
export const PROBLEM_KINDS: readonly ProblemKind[] = ["attention", "block"];

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

/** What an implementation is set up with: one of the two problems. */
export type BenchProblem = Problem | BlockProblem;

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

/** The block's weights by PyTorch state_dict key (what `transformerBlock(...).weights` lists), `{ shape, data }`. */
export function blockStateDict(p: BlockProblem): Record<string, { shape: number[]; data: Float32Array }> {
  const d = p.shape.d;
  const hidden = MLP_RATIO * d;
  return {
    "ln1.weight": { shape: [d], data: p.ln1w },
    "ln1.bias": { shape: [d], data: p.ln1b },
    "attention.qkv_proj.weight": { shape: [3 * d, d], data: p.wqkv },
    "attention.out_proj.weight": { shape: [d, d], data: p.wo },
    "ln2.weight": { shape: [d], data: p.ln2w },
    "ln2.bias": { shape: [d], data: p.ln2b },
    "mlp.0.weight": { shape: [hidden, d], data: p.w1 },
    "mlp.0.bias": { shape: [hidden], data: p.b1 },
    "mlp.2.weight": { shape: [d, hidden], data: p.w2 },
    "mlp.2.bias": { shape: [d], data: p.b2 },
  };
}

/** The problem `--problem` asks for, at one shape. */
export function makeBenchProblem(kind: ProblemKind, shape: BenchShape, seed = 42): BenchProblem {
  return kind === "block" ? makeBlockProblem(shape, seed) : makeProblem(shape, seed);
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
