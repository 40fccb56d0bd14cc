// layer-norm backward, the statistics recomputed from x exactly as the forward kernel computes them (layer-norm.wgsl.ts:
// the row shifted by its first element, two passes, biased variance), so x̂ = ((x − x₀) − mean) · rstd is the forward's.
// - layer-norm-grad (to x): one workgroup per row; with ĝ = grad ⊙ weight (weight absent = 1),
//   dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), both means by workgroup reductions (REDUCE_WGSL).
// - layer-norm-weight-grad (to the weight): Σ over rows of grad ⊙ x̂. A first program writes each row's (x₀, mean,
//   rstd) to a scratch [rows, 3]; a second gives each column e one workgroup, which splits the rows over its threads
//   and adds the partial sums as a tree (a column sum over thousands of rows stays accurate in float32).
// grad and x may have any strides; the weight is an [E] view read through its stride.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { optionalInput, requireInput } from "./checks.js";
import { rowGrid, rowProgram } from "./row-program.wgsl.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks).
import { checkLayerNormEps, expectAxis, expectNormParams, expectSameShape } from "@attngraph/graph";

/**
 * WGSL statements computing one row's x0, mean and rstd in a workgroup (thread `t`, REDUCE_WGSL bound): the forward
 * kernel's arithmetic (normalizeRowWgsl). `x(j)` is the row's element j, `ne` the row length, `eps` an f32 expression.
 */
function rowStatsWgsl(x: (j: string) => string, ne: string, eps: string): string {
  return /* wgsl */ `
  let x0 = ${x("0u")};
  var s = 0.0;
  for (var j = t; j < ${ne}; j += ${WG}u) { s += ${x("j")} - x0; }
  let mean = reduce_sum(t, s) / f32(${ne});
  var q = 0.0;
  for (var j = t; j < ${ne}; j += ${WG}u) { let dev = (${x("j")} - x0) - mean; q += dev * dev; }
  let rstd = 1.0 / sqrt(reduce_sum(t, q) / f32(${ne}) + ${eps});`;
}

/** Params: grad view, x view, rows, E, grad's and x's last strides, eps, weight (present, offset, stride). */
function gradProgram(
  grad: GpuTensor,
  x: GpuTensor,
  w: GpuTensor | undefined,
  eps: number,
  out: GpuTensor,
): ProgramInfo {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const p = new Params();
  const gv = p.view(grad);
  const xv = p.view(x);
  const r = p.u32(rows);
  p.u32(ne);
  p.u32(grad.strides[grad.rank - 1]!);
  p.u32(x.strides[x.rank - 1]!);
  p.f32(eps);
  p.u32(w ? 1 : 0);
  p.u32(w?.offset ?? 0);
  p.u32(w?.strides[0] ?? 0);
  return rowProgram({
    name: "layer-norm-grad",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["G", "X", "W"]),
    body: /* wgsl */ `  let ne = pu(${r + 1}u); let gs = pu(${r + 2}u); let xs = pu(${r + 3}u);
  let hasW = pu(${r + 5}u) != 0u; let wo = pu(${r + 6}u); let ws = pu(${r + 7}u);
  let gb = view_at(${gv}u, row * ne);
  let xb = view_at(${xv}u, row * ne);${rowStatsWgsl((j) => `X[xb + ${j} * xs]`, "ne", `pf(${r + 4}u)`)}
  var sg = 0.0;
  var sgx = 0.0;
  for (var j = t; j < ne; j += ${WG}u) {
    let xh = ((X[xb + j * xs] - x0) - mean) * rstd;
    var gh = G[gb + j * gs];
    if (hasW) { gh = gh * W[wo + j * ws]; }
    sg += gh;
    sgx += gh * xh;
  }
  let mg = reduce_sum(t, sg) / f32(ne);
  let mgx = reduce_sum(t, sgx) / f32(ne);
  let o = row * ne;
  for (var j = t; j < ne; j += ${WG}u) {
    let xh = ((X[xb + j * xs] - x0) - mean) * rstd;
    var gh = G[gb + j * gs];
    if (hasW) { gh = gh * W[wo + j * ws]; }
    Y[o + j] = rstd * ((gh - mg) - xh * mgx);
  }`,
    inputs: [grad, x, w ?? x],
    output: out,
  });
}

/** Params: x view, rows, E, x's last stride, eps. One workgroup per row; writes (x0, mean, rstd) at 3·row. */
function statsProgram(x: GpuTensor, eps: number, out: GpuTensor): ProgramInfo {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const p = new Params();
  const xv = p.view(x);
  const r = p.u32(rows);
  p.u32(ne);
  p.u32(x.strides[x.rank - 1]!);
  p.f32(eps);
  return rowProgram({
    name: "layer-norm-stats",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["X"]),
    body: /* wgsl */ `  let ne = pu(${r + 1}u); let xs = pu(${r + 2}u);
  let xb = view_at(${xv}u, row * ne);${rowStatsWgsl((j) => `X[xb + ${j} * xs]`, "ne", `pf(${r + 3}u)`)}
  if (t == 0u) { Y[3u * row] = x0; Y[3u * row + 1u] = mean; Y[3u * row + 2u] = rstd; }`,
    inputs: [x],
    output: out,
  });
}

/** Params: grad view, x view, rows, E. One workgroup per column e: Σ_r grad[r, e] · x̂[r, e] from the row stats ST. */
function weightGradProgram(grad: GpuTensor, x: GpuTensor, stats: GpuTensor, out: GpuTensor): ProgramInfo {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const p = new Params();
  const gv = p.view(grad);
  const xv = p.view(x);
  const r = p.u32(rows);
  p.u32(ne);
  return {
    name: "layer-norm-weight-grad",
    cacheKey: "layer-norm-weight-grad",
    code: () => /* wgsl */ `${PRELUDE}${REDUCE_WGSL}
${storageBindings(["G", "X", "ST"])}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let e = wg.y * nw.x + wg.x;
  let ne = pu(${r + 1}u);
  if (e >= ne) { return; }
  let t = lid.x;
  var s = 0.0;
  for (var row = t; row < pu(${r}u); row += ${WG}u) {
    let i = row * ne + e;
    let xh = ((X[view_at(${xv}u, i)] - ST[3u * row]) - ST[3u * row + 1u]) * ST[3u * row + 2u];
    s += G[view_at(${gv}u, i)] * xh;
  }
  s = reduce_sum(t, s);
  if (t == 0u) { Y[e] = s; }
}`,
    params: p,
    inputs: [grad, x, stats],
    output: out,
    workgroups: rowGrid(ne),
  };
}

/** Inputs: grad [..., E], x [..., E], optional weight [E]; attrs { eps } → [..., E]. */
export const layerNormGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const w = optionalInput(call, 2, "weight");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  expectNormParams(call, x.shape[x.rank - 1]!, w, undefined);
  const out = gpu.alloc(x.shape);
  if (out.size > 0) await gpu.run(gradProgram(grad, x, w, eps, out));
  return out;
};

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const layerNormWeightGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  const ne = x.shape[x.rank - 1]!;
  const out = gpu.alloc([ne]);
  if (ne === 0) return out;
  const rows = x.size / ne;
  const stats = gpu.alloc([rows, 3]);
  try {
    if (rows > 0) await gpu.run(statsProgram(x, eps, stats));
    await gpu.run(weightGradProgram(grad, x, stats, out));
  } finally {
    gpu.release(stats);
  }
  return out;
};
