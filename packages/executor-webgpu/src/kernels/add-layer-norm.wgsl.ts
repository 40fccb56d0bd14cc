// add-layer-norm: [a + b | LayerNorm(a + b)] side by side on the last axis ([..., 2E]), the residual add and the layer
// norm of a pre-norm block in one step (the scheduler then slices the sum and the norm out of it as views). One
// workgroup per row: its threads add the row as the add kernel does (a and b as broadcast views of the sum's shape,
// `broadcastStrides`, one float32 addition per element) and store the sums in the row's first half; after a storage
// barrier they normalize those stored float32 sums with the layer-norm kernel's own WGSL (normalizeRowWgsl: two
// passes, shifted by the row's first element) into the second half. Both halves are therefore the numbers of add then
// layer-norm, with one dispatch and no second read of a and b.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { rowProgram } from "./row-program.wgsl.js";
import { programKernel } from "./output.js";
import { normalizeRowWgsl, packLayerNormParams } from "./layer-norm.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph: the broadcast rule).
import { broadcastStrides, type AddLayerNormAttrs } from "@attngraph/graph";

/**
 * Params: a and b as views of the sum's shape [..., E], rows, E, a's and b's last strides, eps, then (present, offset,
 * stride) for weight and for bias. Workgroups: one per row (a 2-D grid past 65535 rows). Absent weight/bias are bound
 * to a and never read.
 */
function program(
  a: GpuTensor,
  b: GpuTensor,
  sumShape: readonly number[],
  w: GpuTensor | undefined,
  bias: GpuTensor | undefined,
  eps: number,
  out: GpuTensor,
): ProgramInfo {
  const ne = sumShape[sumShape.length - 1]!;
  const rows = sumShape.slice(0, -1).reduce((n, d) => n * d, 1);
  const as = broadcastStrides(a.shape, a.strides, sumShape);
  const bs = broadcastStrides(b.shape, b.strides, sumShape);
  const p = new Params();
  const av = p.view({ shape: sumShape, strides: as, offset: a.offset });
  const bv = p.view({ shape: sumShape, strides: bs, offset: b.offset });
  const r = p.u32(rows);
  const e = p.u32(ne);
  const las = p.u32(as[as.length - 1]!);
  const lbs = p.u32(bs[bs.length - 1]!);
  const norm = packLayerNormParams(p, eps, w, bias);
  return rowProgram({
    name: "add-layer-norm",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["A", "BB", "W", "B"]),
    body: /* wgsl */ `  let n = pu(${e}u);
  let sa = pu(${las}u); let sb = pu(${lbs}u);
  let pa = view_at(${av}u, row * n); let pb = view_at(${bv}u, row * n);
  let sum = row * 2u * n; // the row's first half: the sums; its second half: their normalization
  for (var j = t; j < n; j += ${WG}u) { Y[sum + j] = A[pa + j * sa] + BB[pb + j * sb]; }
  // Every thread reads the stored sums below, x₀ included: make the other threads' stores visible.
  storageBarrier();${normalizeRowWgsl({ ...norm, x: (j) => `Y[sum + ${j}]`, out: "sum + n", ne: "n" })}`,
    inputs: [a, b, w ?? a, bias ?? a],
    output: out,
  });
}

/** Inputs: a, b (broadcastable to [..., E]), optional weight [E], optional bias [E]; attrs { eps } → [..., 2E]. */
export const addLayerNormKernel: WebGpuKernel = programKernel<
  AddLayerNormAttrs,
  [GpuTensor, GpuTensor, GpuTensor?, GpuTensor?]
>(([a, b, w, bias], { eps }, out) => {
  // The declaration's rule made outShape [..., 2E] of the sums' shape [..., E], which a and b broadcast to.
  const o = out.shape;
  const sumShape = [...o.slice(0, -1), o[o.length - 1]! / 2];
  return program(a, b, sumShape, w, bias, eps, out);
});
