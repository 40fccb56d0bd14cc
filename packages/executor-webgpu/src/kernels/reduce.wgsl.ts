// Workgroup reductions over WG threads: every thread passes its partial value and gets the workgroup's result back.
import { WG } from "./shared.wgsl.js";

/** WGSL: workgroup reductions over WG threads (max, sum, or) used by the row kernels and the fused attention. */
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
