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
