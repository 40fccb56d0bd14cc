// dropout with the CPU executor's counter-based generator (spec: packages/executor-cpu/README.md, "The dropout
// generator"): element i (row-major index in the output) is kept when fmix32(fmix32(seed) XOR i · 0x9e3779b9) >=
// floor(rate · 2³²), all in wrapping u32 arithmetic, and becomes x · f32(1 / (1 − rate)) (one correctly rounded f32
// multiply, as the CPU's fround). So the same seed gives the same mask, bit for bit, on every executor.
import type { DropoutAttrs } from "@attngraph/graph";
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { attrsOf, input } from "./inputs.js";
import { writeOutput } from "./output.js";
import { type Params, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph: the generator's one TypeScript implementation, used here on the host to
// hoist fmix32(seed)), re-exported under the names this package always used.
import { dropoutThreshold, fmix32 } from "@attngraph/graph";
export { dropoutThreshold, fmix32 };

/**
 * WGSL: the generator. `dropout_bits(mixedSeed, i)` with mixedSeed = fmix32(seed), hoisted to the host. A copy of
 * @attngraph/graph's `dropoutBits` in WGSL; src/dropout.test.ts runs it on the device against that, bit for bit.
 */
export const DROPOUT_WGSL = /* wgsl */ `
fn fmix32(x: u32) -> u32 {
  var h = x;
  h ^= h >> 16u;
  h *= 0x85ebca6bu;
  h ^= h >> 13u;
  h *= 0xc2b2ae35u;
  h ^= h >> 16u;
  return h;
}
fn dropout_bits(mixedSeed: u32, i: u32) -> u32 { return fmix32(mixedSeed ^ (i * 0x9e3779b9u)); }`;

/** Packs (mixedSeed, threshold, keptScale) and returns the word position. */
export function packDropout(p: Params, a: DropoutAttrs): number {
  const at = p.u32(fmix32(a.seed));
  p.u32(dropoutThreshold(a.rate));
  p.f32(Math.fround(1 / (1 - a.rate)));
  return at;
}

/** Params: n, x view, dropout words. One invocation per element. */
function program(x: GpuTensor, a: DropoutAttrs, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(x.size);
  const xv = p.view(x);
  const d = packDropout(p, a);
  return elementwiseProgram({
    name: "dropout",
    params: p,
    helpers: DROPOUT_WGSL,
    bindings: storageBindings(["X"]),
    body: /* wgsl */ `  let x = X[view_at(${xv}u, i)];
  Y[i] = select(0.0, x * pf(${d + 2}u), dropout_bits(pu(${d}u), i) >= pu(${d + 1}u));`,
    inputs: [x],
    output: out,
  });
}

/** Input: x; attrs { rate, seed, training } → same shape. Eval mode or rate 0: a view of x (no copy, no dispatch). */
export const dropoutKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0);
  const a = attrsOf<DropoutAttrs>(call);
  if (!a.training || a.rate === 0) return gpu.view(x, x.shape, x.strides, x.offset);
  return writeOutput(call, gpu, (out) => program(x, a, out));
};
