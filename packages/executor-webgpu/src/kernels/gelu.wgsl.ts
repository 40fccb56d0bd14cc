// gelu, elementwise over any strided x, in PyTorch's two forms:
// - "none": x · Φ(x), Φ from erf.wgsl.ts (WGSL has no erf).
// - "tanh": x/2 · (1 + tanh(u)), u = √(2/π) · (x + 0.044715 x³), computed as x / (1 + exp(−2u)) (the same function:
//   (1 + tanh u)/2 is the logistic of 2u). No tanh built-in: some drivers build it from exponentials that overflow to
//   inf/inf = NaN for large |u|, and x³ itself overflows past |x| ≈ 7e12. So u is computed from x clamped to [−10, 10],
//   where exp(±2u) = exp(±87.2) stays finite; beyond, the factor is 1 (x > 10: 1/(1 + 1e-38)) or taken as exactly 0
//   (x < −10, true factor < 1e-38), so a huge negative x gives −0, not x/exp(87.2).
// GELU_WGSL (both forms as `gelu(x, tanh_form)`) is shared with the matmul's gelu epilogue (linear-gelu), so the
// fused op computes exactly this kernel's function of the projection's float32 result.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { programKernel } from "./output.js";
import { ERF_WGSL } from "./erf.wgsl.js";
import { storageBindings } from "./shared.wgsl.js";
import type { GeluAttrs } from "@attngraph/graph";

/** WGSL: `gelu(x, tanh_form)`, the exact (erf) or tanh form; needs nothing but itself (ERF_WGSL included). */
export const GELU_WGSL = /* wgsl */ `${ERF_WGSL}
fn gelu_tanh(x: f32) -> f32 {
  let c = clamp(x, -10.0, 10.0);
  let u = 0.797884560802865356 * (c + 0.044715 * c * c * c);
  return x * select(1.0 / (1.0 + exp(-2.0 * u)), 0.0, x < -10.0);
}
fn gelu(x: f32, tanh_form: bool) -> f32 { return select(x * normal_cdf(x), gelu_tanh(x), tanh_form); }`;

/**
 * The program of gelu and gelu-grad: `fn(x, tanh_form)` of each element of x (GELU_WGSL's gelu, GELU_GRAD_WGSL's
 * gelu_grad, given as `helpers`), in the form `tanh` picks, times the element of `grad` when there is one (gelu-grad's
 * chain rule). The form is a param, so one pipeline serves both. Params: n, x view, tanh (1) or exact (0), grad view.
 */
export function geluFormProgram(
  name: string,
  helpers: string,
  fn: string,
  x: GpuTensor,
  tanh: boolean,
  grad: GpuTensor | undefined,
  out: GpuTensor,
): ProgramInfo {
  const p = elementwiseParams(out.size);
  const xv = p.view(x);
  const form = p.u32(tanh ? 1 : 0);
  const times = grad ? `G[view_at(${p.view(grad)}u, i)] * ` : "";
  return elementwiseProgram({
    name,
    params: p,
    helpers,
    bindings: storageBindings(grad ? ["X", "G"] : ["X"]),
    body: /* wgsl */ `  Y[i] = ${times}${fn}(X[view_at(${xv}u, i)], pu(${form}u) != 0u);`,
    inputs: grad ? [x, grad] : [x],
    output: out,
  });
}

/** Input: x [...]; attrs { approximate: "none" | "tanh" } → same shape. */
export const geluKernel: WebGpuKernel = programKernel<GeluAttrs, [GpuTensor]>(([x], { approximate }, out) =>
  geluFormProgram("gelu", GELU_WGSL, "gelu", x, approximate === "tanh", undefined, out),
);
