// sum-to: x summed down to the call's outShape, the reverse of broadcasting (a bias gradient [E] of [B, T, E], the
// key/value head gradient of a GQA group [B, Hkv, 1, S, D] of [B, Hkv, g, S, D]). x is read as two views of its own
// memory: the kept axes (the outShape, x's strides) and the summed ones (x's leading axes and the axes where outShape
// has 1, x's strides, offset 0), so output o is Σ_r X[kept(o) + summed(r)], for any strides, with no copy.
// Two variants: few terms per output (R < WG_MIN_TERMS) sum serially, one invocation per output; many (the bias
// gradient over every row) split each output's terms over a workgroup and add the partial sums as a tree
// (REDUCE_WGSL), which is both faster and more accurate than one long float32 chain.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseProgram } from "./elementwise.wgsl.js";
import { input } from "./inputs.js";
import { writeOutput } from "./output.js";
import { rowProgram } from "./row-program.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks). Kept from the declaration's rule: a shape attribute that
// names dims reaches the kernel as names, bound only in outShape, which checkCall cannot hold against x's dims.
import { checkSumToShape } from "@attngraph/graph";

/** Terms per output from which one workgroup (not one invocation) sums an output. */
const WG_MIN_TERMS = 256;

/** The kept and summed views of x for outShape `shape` (checked), and R, the terms per output. */
function split(
  x: GpuTensor,
  shape: readonly number[],
): {
  kept: Pick<GpuTensor, "shape" | "strides" | "offset">;
  summed: Pick<GpuTensor, "shape" | "strides" | "offset">;
  terms: number;
} {
  const lead = x.rank - shape.length;
  const sShape: number[] = [];
  const sStrides: number[] = [];
  for (let a = 0; a < x.rank; a++) {
    const d = x.shape[a]!;
    if (a < lead || (shape[a - lead] === 1 && d !== 1)) {
      sShape.push(d);
      sStrides.push(x.strides[a]!);
    }
  }
  return {
    kept: { shape, strides: x.strides.slice(lead), offset: x.offset },
    summed: { shape: sShape, strides: sStrides, offset: 0 },
    terms: sShape.reduce((a, d) => a * d, 1),
  };
}

/** Params: kept view, summed view, outputs n, terms R. Serial: one invocation per output; else one workgroup each. */
function program(x: GpuTensor, shape: readonly number[], out: GpuTensor): ProgramInfo {
  const { kept, summed, terms } = split(x, shape);
  const p = new Params();
  const kv = p.view(kept);
  const sv = p.view(summed);
  const n = p.u32(out.size);
  const r = p.u32(terms);
  if (terms < WG_MIN_TERMS) {
    return elementwiseProgram({
      name: "sum-to",
      params: p,
      count: n,
      bindings: storageBindings(["X"]),
      index: "o",
      body: /* wgsl */ `  let base = view_at(${kv}u, o);
  var s = 0.0;
  for (var k = 0u; k < pu(${r}u); k++) { s += X[base + view_at(${sv}u, k)]; }
  Y[o] = s;`,
      inputs: [x],
      output: out,
    });
  }
  return rowProgram({
    name: "sum-to",
    cacheKey: "sum-to-workgroup",
    params: p,
    count: n,
    rows: out.size,
    bindings: storageBindings(["X"]),
    index: "o",
    body: /* wgsl */ `  let base = view_at(${kv}u, o);
  var s = 0.0;
  for (var k = t; k < pu(${r}u); k += ${WG}u) { s += X[base + view_at(${sv}u, k)]; }
  s = reduce_sum(t, s);
  if (t == 0u) { Y[o] = s; }`,
    inputs: [x],
    output: out,
  });
}

/** Input: x [...]; attrs { shape } (concrete: call.outShape) → outShape. */
export const sumToKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0);
  const shape = checkSumToShape(call, x);
  return writeOutput(call, gpu, (out) => program(x, shape, out));
};
