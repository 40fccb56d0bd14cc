// gelu: the activation between the two linear layers of a transformer block's MLP, in PyTorch's two forms (and its
// derivative, which gelu-grad reads).
import type { GeluAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/**
 * erf(x) in float64 with |error| < 1.2e-7 (Numerical Recipes' `erfcc`, a Chebyshev fit of erfc with that bound on its
 * fractional error): far below what float32 keeps of GELU's result, and a fixed cost per element (one exp).
 */
export function erf(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const erfc =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - erfc : erfc - 1;
}

/** GELU of one value: exact x · Φ(x) (approximate "none"), or the tanh approximation. NaN stays NaN. */
export function gelu(x: number, tanh: boolean): number {
  return tanh
    ? 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    : 0.5 * x * (1 + erf(x * Math.SQRT1_2));
}

const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/**
 * gelu'(x) in float64. Exact ("none"): Φ(x) + x·φ(x). Tanh form: with u = √(2/π)(x + 0.044715x³) and t = tanh u,
 * ½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²). NaN stays NaN.
 */
export function geluDerivative(x: number, tanh: boolean): number {
  if (tanh) {
    const t = Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x);
  }
  return 0.5 * (1 + erf(x * Math.SQRT1_2)) + x * Math.exp(-0.5 * x * x) * INV_SQRT_2PI;
}

/**
 * GELU elementwise in float64, stored as float32. Each element is read before it is written, so `out` may be x's memory.
 * @param x [...], any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function geluImpl(x: StridedView, tanh: boolean, out?: Float32Array, part?: RowRange): Float32Array {
  const [r0, n, [rows], [xs], [xd]] = planRows(part, x);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  for (let r = 0; r < rows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = rows[r]!; j < n; j++, p += xs) y[o + j] = gelu(xd[p]!, tanh);
  }
  return y;
}

/** Input: x [...]; attrs { approximate: "none" | "tanh" } → same shape. */
export const geluKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const tanh = attrsOf<GeluAttrs>(call).approximate === "tanh";
  return writeRows(call, chunkWork, x.shape, GELU_WORK, (y, part) => geluImpl(x, tanh, y, part));
});

/** Work per element in multiply-adds of the matmul core: one exp or tanh and a polynomial (estimated ≈ 20). */
const GELU_WORK = 20;
