// softmax-grad: the input gradient of y = softmax(scale · x) over the last axis, from y itself:
// dx = scale · y ⊙ (grad − Σ_row grad ⊙ y). One workgroup per row, the row's dot product by a workgroup reduction
// (REDUCE_WGSL). y and grad may have any strides. A fully masked row (y all 0) gives exactly 0: its dot product is 0 and
// every term is 0 · finite, and a −0 is stored as 0 (on its bits: a compiler may fold x + 0.0 into x); a NaN in y or grad propagates through the arithmetic.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { programKernel } from "./output.js";
import { rowProgram } from "./row-program.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";
import type { SoftmaxGradAttrs } from "@attngraph/graph";

/** Params: y view, grad view, rows, S, y's and grad's last strides, scale. One workgroup per row. */
function program(y: GpuTensor, grad: GpuTensor, scale: number, out: GpuTensor): ProgramInfo {
  const ns = y.shape[y.rank - 1]!;
  const rows = y.size / ns;
  const p = new Params();
  const yv = p.view(y);
  const gv = p.view(grad);
  const r = p.u32(rows);
  p.u32(ns);
  p.u32(y.strides[y.rank - 1]!);
  p.u32(grad.strides[grad.rank - 1]!);
  p.f32(scale);
  return rowProgram({
    name: "softmax-grad",
    params: p,
    count: r,
    rows,
    helpers: /* wgsl */ `
fn no_neg_zero(v: f32) -> f32 { let b = bitcast<u32>(v); return bitcast<f32>(select(b, 0u, b == 0x80000000u)); }`,
    bindings: storageBindings(["SM", "G"]),
    body: /* wgsl */ `  let ns = pu(${r + 1}u); let ys = pu(${r + 2}u); let gs = pu(${r + 3}u); let scale = pf(${r + 4}u);
  let yb = view_at(${yv}u, row * ns);
  let gb = view_at(${gv}u, row * ns);
  var d = 0.0;
  for (var j = t; j < ns; j += ${WG}u) { d += SM[yb + j * ys] * G[gb + j * gs]; }
  d = reduce_sum(t, d);
  let o = row * ns;
  for (var j = t; j < ns; j += ${WG}u) {
    Y[o + j] = no_neg_zero(scale * SM[yb + j * ys] * (G[gb + j * gs] - d));
  }`,
    inputs: [y, grad],
    output: out,
  });
}

/** Inputs: y [..., S] (the forward softmax's output), grad [..., S]; attrs { scale } → [..., S]. */
export const softmaxGradKernel: WebGpuKernel = programKernel<SoftmaxGradAttrs, [GpuTensor, GpuTensor]>(
  ([y, grad], { scale }, out) => program(y, grad, scale, out),
);
