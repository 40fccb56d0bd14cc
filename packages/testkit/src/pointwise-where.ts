// A pointwise case every executor runs: three inputs under one `where`, so a kernel that loads the inputs' elements
// into shared registers (or mixes up their slots) gives wrong numbers.
import type { Expr } from "@attngraph/graph";

const el = (name: string) => ({ op: "input", name, index: [] });

/** where(x0 > 0, x1 · x2, x2 − 1.5), elementwise over three inputs of one shape. */
export const WHERE3_EXPR = {
  op: "where",
  args: [
    { op: "gt", args: [el("x0"), 0] },
    { op: "mul", args: [el("x1"), el("x2")] },
    { op: "sub", args: [el("x2"), 1.5] },
  ],
} as Expr;

/** WHERE3_EXPR's float32 result on dense row-major values. */
export function where3(x0: Float32Array, x1: Float32Array, x2: Float32Array): Float32Array {
  return Float32Array.from(x0, (v, i) => (v > 0 ? Math.fround(x1[i]! * x2[i]!) : Math.fround(x2[i]! - 1.5)));
}
