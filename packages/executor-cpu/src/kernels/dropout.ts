// dropout with a counter-based generator: whether element i is kept is a pure function of (seed, i), so the WebAssembly
// and WGSL executors reproduce the CPU mask bit for bit, in any order and in parallel. The spec is in the README;
// change nothing here without changing it there and in every executor.
import type { DropoutAttrs } from "@attngraph/graph";
import type { CpuKernel } from "../executor.js";
import { attrError, outData, requireInput, result, type Call } from "./adapter.js";
import { lastAxis, rowOffsets, type StridedView } from "./strided.js";
// Shared by every executor (@attngraph/graph kernel-checks), re-exported under the names this package always used.
import { checkDropoutAttrs, type DropoutFields } from "@attngraph/graph";
export { checkDropoutAttrs, type DropoutFields };

/** MurmurHash3's 32-bit finaliser: a bijection on uint32 that mixes every input bit into every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The uint32 random bits of element `i` (row-major index in the output; taken mod 2³²) under `seed` (a uint32). */
export function dropoutBits(seed: number, i: number): number {
  return mixedBits(fmix32(seed), i);
}

/**
 * `dropoutBits` with the seed already mixed (`fmix32(seed)`), for loops that hoist it. The fused attention kernel uses
 * this too, with i = the element's index in the [B, H, L, S] weights, so it drops exactly what the dropout kernel drops.
 */
export function mixedBits(mixedSeed: number, i: number): number {
  return fmix32((mixedSeed ^ Math.imul(i, 0x9e3779b9)) >>> 0);
}

/** Elements whose bits are below this uint32 are dropped: floor(rate · 2³²), clamped to 2³² − 1. */
export function dropoutThreshold(rate: number): number {
  return Math.min(Math.floor(rate * 2 ** 32), 2 ** 32 - 1);
}

/** Whether element `i` survives dropout at `rate` under `seed`. */
export function dropoutKeep(seed: number, i: number, rate: number): boolean {
  return dropoutBits(seed, i) >= dropoutThreshold(rate);
}

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
  const { rate, seed, training } = checkDropoutAttrs(call);
  const out = outData(call, x.shape);
  if (!training || rate === 0) {
    if (out === undefined) return x;
    x.copyInto(out);
    return call.out!;
  }
  return result(call, dropoutImpl(x, rate, seed, out), x.shape);
};

