// dropout with a counter-based generator: whether element i is kept is a pure function of (seed, i), so the WebAssembly
// and WGSL executors reproduce the CPU mask bit for bit, in any order and in parallel. The spec is in the README; the
// generator itself is written once, in @attngraph/graph (ops/dropout-hash.ts), and re-exported here under the names
// this package always exported.
import { dropoutBits, dropoutKeep, dropoutThreshold, fmix32, mixedBits, type DropoutAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { outData, requireInput, result, attrsOf } from "./adapter.js";
import { lastAxis, rowOffsets, type StridedView } from "./strided.js";
// The generator is shared by every executor (@attngraph/graph), re-exported under the names this package always used.
export { dropoutBits, dropoutKeep, dropoutThreshold, fmix32, mixedBits };

/**
 * Training-mode dropout: element i (row-major) is kept as fround(x · fround(1 / (1 − rate))) when
 * `dropoutKeep(seed, i, rate)`, else 0. The product of two float32 values is exact in float64, so the single fround
 * equals a float32 multiply on any executor.
 * @param x [...], any strides
 * @param out where to write the result row-major; default: a new array
 * @returns same shape, row-major (`out` when given)
 */
export function dropoutImpl(x: StridedView, rate: number, seed: number, out?: Float32Array): Float32Array {
  const rows = rowOffsets(x);
  const { length: n, stride: xs } = lastAxis(x);
  const xd = x.data;
  const y = out ?? new Float32Array(rows.length * n);
  const mixedSeed = fmix32(seed); // hoisted: dropoutBits(seed, i) without re-mixing the seed per element
  const threshold = dropoutThreshold(rate);
  const keptScale = Math.fround(1 / (1 - rate));
  let i = 0;
  for (let r = 0; r < rows.length; r++) {
    for (let j = 0, p = rows[r]!; j < n; j++, p += xs, i++) {
      y[i] = mixedBits(mixedSeed, i) >= threshold ? xd[p]! * keptScale : 0;
    }
  }
  return y;
}

/**
 * Input: x; attrs { rate, seed, training } → same shape. Eval mode or rate 0 is the identity: x itself, or a copy of x in
 * `call.out` when the planner gave one (the planner may hand x's buffer to a later node once this one has run).
 */
export const dropoutKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  const { rate, seed, training } = attrsOf<DropoutAttrs>(call);
  const out = outData(call, x.shape);
  if (!training || rate === 0) {
    if (out === undefined) return x;
    x.copyInto(out);
    return call.out!;
  }
  return result(call, dropoutImpl(x, rate, seed, out), x.shape);
};
