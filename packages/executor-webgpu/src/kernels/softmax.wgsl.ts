// softmax: softmax(scale · x) over the last axis, one workgroup per row. Stable (the row max of the scaled unmasked
// entries is subtracted before exp); an entry equal to −∞ is masked and gets exactly 0; a row with every entry −∞
// gives zeros, never NaN; a NaN or +∞ in a row makes the whole row NaN, as on the CPU executor and in PyTorch. The
// special values are found by their bits (see shared.wgsl.ts), not by comparisons a compiler may fold away.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { checkScale, requireInput } from "./checks.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";

/** WGSL: workgroup reductions over WG threads (max, sum, or) used by softmax and the fused attention. */
export const REDUCE_WGSL = /* wgsl */ `
var<workgroup> red: array<f32, ${WG}>;
var<workgroup> redFlag: array<u32, ${WG}>;
fn reduce_max(t: u32, v: f32) -> f32 {
  red[t] = v;
  workgroupBarrier();
  for (var s = ${WG / 2}u; s > 0u; s >>= 1u) {
    if (t < s && red[t + s] > red[t]) { red[t] = red[t + s]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}
fn reduce_sum(t: u32, v: f32) -> f32 {
  red[t] = v;
  workgroupBarrier();
  for (var s = ${WG / 2}u; s > 0u; s >>= 1u) {
    if (t < s) { red[t] = red[t] + red[t + s]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}
fn reduce_or(t: u32, v: bool) -> bool {
  redFlag[t] = select(0u, 1u, v);
  workgroupBarrier();
  for (var s = ${WG / 2}u; s > 0u; s >>= 1u) {
    if (t < s) { redFlag[t] = redFlag[t] | redFlag[t + s]; }
    workgroupBarrier();
  }
  let r = redFlag[0] != 0u;
  workgroupBarrier();
  return r;
}`;

/** Params: x view, rows, S, scale. Workgroups: one per row (a 2-D grid past 65535 rows). */
function program(x: GpuTensor, scale: number, out: GpuTensor): ProgramInfo {
  const ns = x.rank === 0 ? 1 : x.shape[x.rank - 1]!;
  const rows = ns === 0 ? 0 : x.size / ns;
  const p = new Params();
  const xv = p.view(x);
  const r = p.u32(rows);
  const s = p.u32(ns);
  const sc = p.f32(scale);
  const ls = p.u32(x.rank === 0 ? 0 : x.strides[x.rank - 1]!);
  const gx = Math.min(rows, 65535);
  return {
    name: "softmax",
    cacheKey: "softmax",
    code: () => /* wgsl */ `${PRELUDE}${REDUCE_WGSL}
${storageBindings(["X"])}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row = wg.y * nw.x + wg.x;
  if (row >= pu(${r}u)) { return; }
  let t = lid.x;
  let ns = pu(${s}u); let scale = pf(${sc}u); let xs = pu(${ls}u);
  let base = view_at(${xv}u, row * ns);
  var mx = neg_inf();
  var bad = false;
  for (var j = t; j < ns; j += ${WG}u) {
    let v = X[base + j * xs];
    if (is_neg_inf(v)) { continue; }
    if (is_bad(v)) { bad = true; continue; }
    mx = max(mx, scale * v);
  }
  mx = reduce_max(t, mx);
  bad = reduce_or(t, bad);
  var sum = 0.0;
  for (var j = t; j < ns; j += ${WG}u) {
    let v = X[base + j * xs];
    if (!is_neg_inf(v) && !bad) { sum += exp(scale * v - mx); }
  }
  sum = reduce_sum(t, sum);
  let o = row * ns;
  for (var j = t; j < ns; j += ${WG}u) {
    let v = X[base + j * xs];
    var y = 0.0;
    if (bad) { y = nan(); } else if (!is_neg_inf(v) && sum > 0.0) { y = exp(scale * v - mx) / sum; }
    Y[o + j] = y;
  }
}`,
    params: p,
    inputs: [x],
    output: out,
    workgroups: [gx, gx === 0 ? 0 : Math.ceil(rows / gx), 1],
  };
}

/** Input: x [..., S] (scores [B, H, L, S] in attention); attrs { scale } → same shape. */
export const softmaxKernel: WebGpuKernel = async (call, gpu) => {
  const x = requireInput(call, 0, "x");
  const scale = checkScale(call);
  const out = gpu.alloc(x.shape);
  await gpu.run(program(x, scale, out));
  return out;
};
