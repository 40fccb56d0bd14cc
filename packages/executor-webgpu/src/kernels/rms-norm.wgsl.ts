// rms-norm over the last axis (LlamaRMSNorm): y = x · rstd · weight, rstd = 1/sqrt(mean(x²) + eps). One workgroup per
// row: one pass for the sum of squares (a workgroup reduction, REDUCE_WGSL), one to write. No mean is subtracted, so
// nothing cancels and float32 sums are what LlamaRMSNorm itself computes in. x may have any strides; weight is an
// optional [E] view. RMS_ROW_WGSL is shared with rms-norm-grad, which recomputes rstd the same way.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { programKernel } from "./output.js";
import { rowProgram } from "./row-program.wgsl.js";
import { optionalVectorWgsl, packOptionalVector, packRow, rowEpsWgsl, rowWgsl } from "./norm-params.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";
import type { RmsNormAttrs } from "@attngraph/graph";

/** WGSL statements giving `rstd` of one row in a workgroup (thread `t`, REDUCE_WGSL bound). */
export function rmsRowWgsl(x: (j: string) => string, ne: string, eps: string): string {
  return /* wgsl */ `
  var q = 0.0;
  for (var j = t; j < ${ne}; j += ${WG}u) { let v = ${x("j")}; q += v * v; }
  let rstd = 1.0 / sqrt(reduce_sum(t, q) / f32(${ne}) + ${eps});`;
}

/** Params: packRow's (x view, rows, E, x's last stride, eps), weight (present, offset, stride). One workgroup per row. */
function program(x: GpuTensor, w: GpuTensor | undefined, eps: number, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const x0 = packRow(p, x, eps);
  const wa = packOptionalVector(p, w);
  return rowProgram({
    name: "rms-norm",
    params: p,
    count: x0.at,
    rows: x0.rows,
    bindings: storageBindings(["X", "W"]),
    body: /* wgsl */ `  ${rowWgsl(x0)}
  ${optionalVectorWgsl("w", wa)}${rmsRowWgsl((j) => `X[xb + ${j} * xs]`, "ne", rowEpsWgsl(x0))}
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
export const rmsNormKernel: WebGpuKernel = programKernel<RmsNormAttrs, [GpuTensor, GpuTensor?]>(
  ([x, w], { eps }, out) => program(x, w, eps, out),
);
