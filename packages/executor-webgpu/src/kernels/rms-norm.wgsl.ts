// rms-norm over the last axis (LlamaRMSNorm): y = x · rstd · weight, rstd = 1/sqrt(mean(x²) + eps). One workgroup per
// row: one pass for the sum of squares (a workgroup reduction, REDUCE_WGSL), one to write. No mean is subtracted, so
// nothing cancels and float32 sums are what LlamaRMSNorm itself computes in. x may have any strides; weight is an
// optional [E] view. RMS_ROW_WGSL is shared with rms-norm-grad, which recomputes rstd the same way.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { attrsOf, input, optionalInput } from "./inputs.js";
import { rowProgram } from "./row-program.wgsl.js";
import { optionalVectorWgsl, packOptionalVector } from "./norm-params.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";
import type { RmsNormAttrs } from "@attngraph/graph";

/** WGSL statements giving `rstd` of one row in a workgroup (thread `t`, REDUCE_WGSL bound). */
export function rmsRowWgsl(x: (j: string) => string, ne: string, eps: string): string {
  return /* wgsl */ `
  var q = 0.0;
  for (var j = t; j < ${ne}; j += ${WG}u) { let v = ${x("j")}; q += v * v; }
  let rstd = 1.0 / sqrt(reduce_sum(t, q) / f32(${ne}) + ${eps});`;
}

/** Params: x view, rows, E, x's last stride, eps, weight (present, offset, stride). One workgroup per row. */
function program(x: GpuTensor, w: GpuTensor | undefined, eps: number, out: GpuTensor): ProgramInfo {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const p = new Params();
  const xv = p.view(x);
  const r = p.u32(rows);
  p.u32(ne);
  p.u32(x.strides[x.rank - 1]!);
  p.f32(eps);
  const wa = packOptionalVector(p, w);
  return rowProgram({
    name: "rms-norm",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["X", "W"]),
    body: /* wgsl */ `  let ne = pu(${r + 1}u); let xs = pu(${r + 2}u);
  ${optionalVectorWgsl("w", wa)}
  let xb = view_at(${xv}u, row * ne);${rmsRowWgsl((j) => `X[xb + ${j} * xs]`, "ne", `pf(${r + 3}u)`)}
  let o = row * ne;
  for (var j = t; j < ne; j += ${WG}u) {
    var y = X[xb + j * xs] * rstd;
    if (hasW) { y = y * W[wo + j * ws]; }
    Y[o + j] = y;
  }`,
    inputs: [x, w ?? x],
    output: out,
  });
}

/** Inputs: x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const rmsNormKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0);
  const w = optionalInput(call, 1);
  const { eps } = attrsOf<RmsNormAttrs>(call);
  const out = gpu.alloc(x.shape);
  if (x.size > 0) await gpu.run(program(x, w, eps, out));
  return out;
};
