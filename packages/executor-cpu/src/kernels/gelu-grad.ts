// gelu-grad: GELU's input gradient, grad · gelu'(x), in the same two forms as the forward kernel (and its erf).
import type { GeluGradAttrs } from "@attngraph/graph";
import { sizeOf } from "@attngraph/tensor";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { erf } from "./gelu.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
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
 * grad · gelu'(x) elementwise in float64, stored as float32.
 * @param grad [...], any strides
 * @param x [...] (grad's shape), any strides
 * @param out where to write row-major; default: a new array
 * @param part the rows (a row = the last axis) to write; default: all
 */
export function geluGradImpl(
  grad: StridedView,
  x: StridedView,
  tanh: boolean,
  out?: Float32Array,
  part?: RowRange,
): Float32Array {
  const [r0, n, [xRows, gRows], [xs, gs], [xd, gd]] = planRows(part, x, grad);
  const y = out ?? new Float32Array(sizeOf(x.shape));
  for (let r = 0; r < xRows.length; r++) {
    const o = (r0 + r) * n;
    for (let j = 0, p = xRows[r]!, q = gRows[r]!; j < n; j++, p += xs, q += gs)
      y[o + j] = gd[q]! * geluDerivative(xd[p]!, tanh);
  }
  return y;
}

/** Inputs: grad [...], x [...] (the forward input); attrs { approximate: "none" | "tanh" } → x's shape. */
export const geluGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const tanh = attrsOf<GeluGradAttrs>(call).approximate === "tanh";
  return writeRows(call, chunkWork, x.shape, GELU_GRAD_WORK, (y, part) => geluGradImpl(grad, x, tanh, y, part));
});

/** Work per element in multiply-adds of the matmul core: two exps (or a tanh) and a polynomial (estimated ≈ 25). */
const GELU_GRAD_WORK = 25;
