// rms-norm backward, rstd recomputed from x exactly as the forward kernel computes it (rmsRowWgsl).
// - rms-norm-grad (to x): one workgroup per row; with x̂ = x · rstd and ĝ = grad ⊙ weight (absent = 1),
//   dx = rstd · (ĝ − x̂ · mean(ĝ ⊙ x̂)), the mean by a workgroup reduction.
// - rms-norm-weight-grad: Σ over rows of grad ⊙ x̂. A first program writes each row's rstd to a scratch [rows]; a
//   second gives each column one workgroup, which splits the rows over its threads and adds the partial sums as a tree
//   (layer-norm-weight-grad's scheme: a column sum over thousands of rows stays accurate in float32).
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { optionalInput, requireInput } from "./checks.js";
import { rowGrid, rowProgram } from "./row-program.wgsl.js";
import { rmsRowWgsl } from "./rms-norm.wgsl.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks).
import { checkLayerNormEps, expectAxis, expectRmsWeight, expectSameShape } from "@attngraph/graph";

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
    name: "rms-norm-grad",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["G", "X", "W"]),
    body: /* wgsl */ `  let ne = pu(${r + 1}u); let gs = pu(${r + 2}u); let xs = pu(${r + 3}u);
  let hasW = pu(${r + 5}u) != 0u; let wo = pu(${r + 6}u); let ws = pu(${r + 7}u);
  let gb = view_at(${gv}u, row * ne);
  let xb = view_at(${xv}u, row * ne);${rmsRowWgsl((j) => `X[xb + ${j} * xs]`, "ne", `pf(${r + 4}u)`)}
  var sgx = 0.0;
  for (var j = t; j < ne; j += ${WG}u) {
    var gh = G[gb + j * gs];
    if (hasW) { gh = gh * W[wo + j * ws]; }
    sgx += gh * (X[xb + j * xs] * rstd);
  }
  let mgx = reduce_sum(t, sgx) / f32(ne);
  let o = row * ne;
  for (var j = t; j < ne; j += ${WG}u) {
    var gh = G[gb + j * gs];
    if (hasW) { gh = gh * W[wo + j * ws]; }
    Y[o + j] = rstd * (gh - (X[xb + j * xs] * rstd) * mgx);
  }`,
    inputs: [grad, x, w ?? x],
    output: out,
  });
}

/** Params: x view, rows, E, x's last stride, eps. One workgroup per row; writes rstd at row. */
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
    name: "rms-norm-stats",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["X"]),
    body: /* wgsl */ `  let ne = pu(${r + 1}u); let xs = pu(${r + 2}u);
  let xb = view_at(${xv}u, row * ne);${rmsRowWgsl((j) => `X[xb + ${j} * xs]`, "ne", `pf(${r + 3}u)`)}
  if (t == 0u) { Y[row] = rstd; }`,
    inputs: [x],
    output: out,
  });
}

/** Params: grad view, x view, rows, E. One workgroup per column e: Σ_r grad[r, e] · x[r, e] · rstd[r]. */
function weightGradProgram(grad: GpuTensor, x: GpuTensor, stats: GpuTensor, out: GpuTensor): ProgramInfo {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const p = new Params();
  const gv = p.view(grad);
  const xv = p.view(x);
  const r = p.u32(rows);
  p.u32(ne);
  return {
    name: "rms-norm-weight-grad",
    cacheKey: "rms-norm-weight-grad",
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
    s += G[view_at(${gv}u, i)] * (X[view_at(${xv}u, i)] * ST[row]);
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
export const rmsNormGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const w = optionalInput(call, 2, "weight");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  expectRmsWeight(call, x.shape[x.rank - 1]!, w);
  const out = gpu.alloc(x.shape);
  if (out.size > 0) await gpu.run(gradProgram(grad, x, w, eps, out));
  return out;
};

/** Inputs: grad [..., E], x [..., E]; attrs { eps } → [E]. */
export const rmsNormWeightGradKernel: WebGpuKernel = async (call, gpu) => {
  const grad = requireInput(call, 0, "grad");
  const x = requireInput(call, 1, "x");
  const eps = checkLayerNormEps(call);
  expectSameShape(call, "x", grad, x);
  expectAxis(call, "x", x);
  const ne = x.shape[x.rank - 1]!;
  const out = gpu.alloc([ne]);
  if (ne === 0) return out;
  const rows = x.size / ne;
  const stats = gpu.alloc([Math.max(rows, 1)]);
  try {
    if (rows > 0) await gpu.run(statsProgram(x, eps, stats));
    await gpu.run(weightGradProgram(grad, x, stats, out));
  } finally {
    gpu.release(stats);
  }
  return out;
};
