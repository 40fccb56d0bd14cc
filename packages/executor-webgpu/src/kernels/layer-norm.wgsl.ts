// layer-norm over the last axis (nn.LayerNorm): y = (x − mean) / sqrt(var + eps) · weight + bias, biased variance.
// One workgroup per row, two passes over it with workgroup reductions (REDUCE_WGSL): the mean first, then the sum of
// squared deviations (never E[x²] − mean², which cancels catastrophically for rows far from 0). The row is first
// shifted by its own first element, d = x − x₀, and the mean and deviations are taken of d: the same numbers in exact
// arithmetic, but a constant row then has d = 0 exactly, so its deviations are exactly 0 and the output is exactly the
// bias (a mean of x rounds and leaves deviations of ±1 ulp, which 1/sqrt(eps) would magnify), and the sums of a row
// offset by 1e4 carry only the spread, not the offset. x may have any strides; weight and bias are optional [E] views.
// The row's WGSL (normalizeRowWgsl) is shared with add-layer-norm, which normalizes the sums it has just written.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { rowProgram } from "./row-program.wgsl.js";
import { programKernel } from "./output.js";
import { optionalVectorWgsl, packOptionalVector, packRow, rowWgsl } from "./norm-params.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";
import type { LayerNormAttrs } from "@attngraph/graph";

/** Where the WGSL of one row's normalization reads and writes, as WGSL expressions and params word positions. */
export interface RowNorm {
  /** The row's element j (a WGSL expression of `j`), e.g. `X[base + j * xs]`. */
  readonly x: (j: string) => string;
  /** The buffer index in Y of the row's first normalized element. */
  readonly out: string;
  /** The row length E (a WGSL u32 expression). */
  readonly ne: string;
  /** Params words: eps (f32), then (present, offset, stride) for the weight and for the bias. */
  readonly eps: number;
  readonly weight: number;
  readonly bias: number;
}

/**
 * WGSL statements computing one row's x0, mean and rstd in a workgroup (thread `t`, REDUCE_WGSL bound), shared with
 * layer-norm's backward, which recomputes them. `x(j)` is the row's element j, `ne` the row length, `eps` an f32
 * expression.
 */
export function layerNormStatsWgsl(x: (j: string) => string, ne: string, eps: string): string {
  return /* wgsl */ `
  let x0 = ${x("0u")};
  var s = 0.0;
  for (var j = t; j < ${ne}; j += ${WG}u) { s += ${x("j")} - x0; }
  let mean = reduce_sum(t, s) / f32(${ne});
  var q = 0.0;
  for (var j = t; j < ${ne}; j += ${WG}u) { let dev = (${x("j")} - x0) - mean; q += dev * dev; }
  let rstd = 1.0 / sqrt(reduce_sum(t, q) / f32(${ne}) + ${eps});`;
}

/**
 * WGSL statements normalizing one row in a workgroup of WG threads (thread `t`, REDUCE_WGSL's reductions, weight `W`
 * and bias `B` bound): the layer-norm kernel's arithmetic, shared with add-layer-norm, which normalizes the sums it
 * has just stored.
 */
export function normalizeRowWgsl(r: RowNorm): string {
  const ne = r.ne;
  return /* wgsl */ `${layerNormStatsWgsl(r.x, ne, `pf(${r.eps}u)`)}
  ${optionalVectorWgsl("w", r.weight)}
  ${optionalVectorWgsl("b", r.bias)}
  let o = ${r.out};
  for (var j = t; j < ${ne}; j += ${WG}u) {
    var y = ((${r.x("j")} - x0) - mean) * rstd;
    if (hasW) { y = y * W[wo + j * ws]; }
    // + 0.0 without a bias: a zero deviation times a negative weight is −0, and the op promises 0.
    y = y + select(0.0, B[bo + j * bs], hasB);
    Y[o + j] = y;
  }`;
}

/** Params: eps, then (present, offset, stride) for weight and for bias; returns the word positions for RowNorm. */
export function packLayerNormParams(
  p: Params,
  eps: number,
  w: GpuTensor | undefined,
  b: GpuTensor | undefined,
): Pick<RowNorm, "eps" | "weight" | "bias"> {
  const ep = p.f32(eps);
  const weight = packOptionalVector(p, w);
  return { eps: ep, weight, bias: packOptionalVector(p, b) };
}

/**
 * Params: packRow's (x view, rows, E, x's last stride, eps), then (present, offset, stride) for weight and for bias.
 * Workgroups: one per row (a 2-D grid past 65535 rows). Absent weight/bias are bound to x and never read.
 */
function program(
  x: GpuTensor,
  w: GpuTensor | undefined,
  b: GpuTensor | undefined,
  eps: number,
  out: GpuTensor,
): ProgramInfo {
  const p = new Params();
  const x0 = packRow(p, x, eps);
  const norm = { eps: x0.at + 3, weight: packOptionalVector(p, w), bias: packOptionalVector(p, b) };
  return rowProgram({
    name: "layer-norm",
    params: p,
    count: x0.at,
    rows: x0.rows,
    bindings: storageBindings(["X", "W", "B"]),
    body: /* wgsl */ `  ${rowWgsl(x0)}${normalizeRowWgsl({ ...norm, x: (j) => `X[xb + ${j} * xs]`, out: "row * ne", ne: "ne" })}`,
    inputs: [x, w ?? x, b ?? x],
    output: out,
  });
}

/** Inputs: x [..., E], optional weight [E], optional bias [E]; attrs { eps } → [..., E]. */
export const layerNormKernel: WebGpuKernel = programKernel<LayerNormAttrs, [GpuTensor, GpuTensor?, GpuTensor?]>(
  ([x, w, b], { eps }, out) => program(x, w, b, eps, out),
);
