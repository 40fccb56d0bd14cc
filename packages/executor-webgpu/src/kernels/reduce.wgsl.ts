// Workgroup reductions over WG threads: every thread passes its partial value and gets the workgroup's result back.
// Each reduction starts with a barrier as well as ending with one: two in a row (layer norm's mean, then its variance)
// must not let the second's `red[t] = v` land before another thread has read the first's `red[0]`. The barrier after
// that read should be enough, but Mesa's lavapipe let the write through (layer norm's variance came out ~2.5% small,
// ×1.013 on the output); the leading barrier keeps it right there (`.ci/run` runs golden-train on lavapipe too).
import { WG } from "./shared.wgsl.js";

/** WGSL: workgroup reductions over WG threads (max, sum, or) used by the row kernels and the fused attention. */
export const REDUCE_WGSL = /* wgsl */ `
var<workgroup> red: array<f32, ${WG}>;
var<workgroup> redFlag: array<u32, ${WG}>;
fn reduce_max(t: u32, v: f32) -> f32 {
  workgroupBarrier();
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
  workgroupBarrier();
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
  workgroupBarrier();
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
