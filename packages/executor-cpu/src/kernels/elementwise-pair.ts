// The elementwise kernels of two inputs read side by side: add and mul (through broadcast views), and the backward
// steps gelu-grad, mask-grad and grad-accumulate (inputs of one shape). One strided loop over the rows of both serves
// them all; only the operator differs. It is chosen once per row, outside the inner loop, so each inner loop stays
// monomorphic for the JIT and no element pays a call. Each op's own file keeps its inputs, attributes and semantics.
import type { Tensor } from "@attngraph/tensor";
import type { Call } from "./adapter.js";
import { geluDerivative } from "./gelu.js";
import { writeRows } from "./row-kernel.js";
import { planRows } from "./row-plan.js";
import type { RowRange, StridedView } from "./strided.js";

/**
 * What y = op(a, b, c) computes per element, in float64, stored as float32:
 * - add, mul: a + b, a · b (a sum or product of two float32s is exact in float64 and rounds once, as float32 does)
 * - gelu-grad, gelu-grad-tanh: b · gelu'(a), the exact or the tanh form (a = x, b = grad)
 * - mask-grad: b == −∞ ? 0 : c · a (a = grad, b = masked)
 * - accumulate: a + c · b; restart: 0 + c · b, a not read (a = acc, b = grad)
 */
export type PairOp = "add" | "mul" | "gelu-grad" | "gelu-grad-tanh" | "mask-grad" | "accumulate" | "restart";

/**
 * Rows `part` of op(a, b, c) elementwise into y (row-major, a's shape).
 * @param a, b [...] (one shape), any strides
 */
export function pairImpl(
  op: PairOp,
  a: StridedView,
  b: StridedView,
  c: number,
  y: Float32Array,
  part: RowRange | undefined,
): void {
  const [r0, n, [ra, rb], [sa, sb], [ad, bd]] = planRows(part, a, b);
  for (let r = 0; r < ra.length; r++) {
    const o = (r0 + r) * n;
    const p0 = ra[r]!;
    const q0 = rb[r]!;
    if (op === "add") for (let j = 0, p = p0, q = q0; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! + bd[q]!;
    else if (op === "mul") for (let j = 0, p = p0, q = q0; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! * bd[q]!;
    else if (op === "gelu-grad")
      for (let j = 0, p = p0, q = q0; j < n; j++, p += sa, q += sb) y[o + j] = bd[q]! * geluDerivative(ad[p]!, false);
    else if (op === "gelu-grad-tanh")
      for (let j = 0, p = p0, q = q0; j < n; j++, p += sa, q += sb) y[o + j] = bd[q]! * geluDerivative(ad[p]!, true);
    else if (op === "mask-grad")
      for (let j = 0, p = p0, q = q0; j < n; j++, p += sa, q += sb) y[o + j] = bd[q] === -Infinity ? 0 : c * ad[p]!;
    else if (op === "accumulate")
      for (let j = 0, p = p0, q = q0; j < n; j++, p += sa, q += sb) y[o + j] = ad[p]! + c * bd[q]!;
    else for (let j = 0, q = q0; j < n; j++, q += sb) y[o + j] = 0 + c * bd[q]!;
  }
}

/** Every row of op(a, b, c) into the planned output (a's shape) or a new array, in chunks. */
export function writePairRows(
  call: Call,
  chunkWork: number,
  op: PairOp,
  a: StridedView,
  b: StridedView,
  c = 0,
): Tensor | Promise<Tensor> {
  return writeRows(call, chunkWork, a.shape, PAIR_WORK[op], (y, part) => pairImpl(op, a, b, c, y, part));
}

/**
 * Work per element in multiply-adds of the matmul core: two strided reads, an operator and a write (≈ 3); gelu's
 * derivative adds two exps (or a tanh) and a polynomial (estimated ≈ 25 in all).
 */
const PAIR_WORK: Readonly<Record<PairOp, number>> = {
  add: 3,
  mul: 3,
  "gelu-grad": 25,
  "gelu-grad-tanh": 25,
  "mask-grad": 3,
  accumulate: 3,
  restart: 3,
};
