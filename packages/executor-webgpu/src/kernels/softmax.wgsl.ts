// softmax: softmax(scale · x) over the last axis, one workgroup per row. Stable (the row max of the scaled unmasked
// entries is subtracted before exp); an entry equal to −∞ is masked and gets exactly 0; a row with every entry −∞
// gives zeros, never NaN; a NaN or +∞ in a row makes the whole row NaN, as on the CPU executor and in PyTorch. The
// special values are found by their bits (see shared.wgsl.ts), not by comparisons a compiler may fold away.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { rowProgram } from "./row-program.wgsl.js";
import { programKernel } from "./output.js";
import type { SoftmaxAttrs } from "@attngraph/graph";
import { Params, WG, storageBindings } from "./shared.wgsl.js";

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
  return rowProgram({
    name: "softmax",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["X"]),
    body: /* wgsl */ `  let ns = pu(${s}u); let scale = pf(${sc}u); let xs = pu(${ls}u);
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
  }`,
    inputs: [x],
    output: out,
  });
}

/** Input: x [..., S] (scores [B, H, L, S] in attention); attrs { scale } → same shape. */
export const softmaxKernel: WebGpuKernel = programKernel<SoftmaxAttrs, [GpuTensor]>(([x], { scale }, out) =>
  program(x, scale, out),
);
