// gelu-grad: grad · gelu'(x), elementwise over any strided grad and x, in the gelu kernel's two forms:
// - "none": Φ(x) + x·φ(x), Φ = normal_cdf from erf.wgsl.ts (the forward's own Φ), φ(x) = exp(−x²/2)/√(2π) taken at x
//   clamped to ±20 (beyond, x·φ(x) is 0 in float32; unclamped, ±∞ · 0 would be NaN and x² could overflow).
// - "tanh": ½(1 + t) + ½x(1 − t²)·k(1 + 3·0.044715x²), t = tanh(u), u = k(x + 0.044715x³), k = √(2/π). No tanh built-in
//   (see gelu.wgsl.ts), and 1 − t² and 1 + t cancel where |t| → 1, so both come from e = exp(−2|u|):
//   1 − t² = 4e/(1 + e)², ½(1 + t) = 1/(1 + e) for u >= 0 and e/(1 + e) for u < 0. As in the forward, u is taken of x
//   clamped to [−10, 10]; beyond, the derivative is 1 (x > 10) or 0 (x < −10), the float32 value of the true one.
// A NaN x gives NaN (decided on its bits: a clamp may turn NaN into a bound), and a NaN grad propagates.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { programKernel } from "./output.js";
import { ERF_WGSL } from "./erf.wgsl.js";
import { geluFormProgram } from "./gelu.wgsl.js";
import type { GeluGradAttrs } from "@attngraph/graph";

/** WGSL: `gelu_grad(x, tanh_form)`, gelu'(x) in the exact (erf) or tanh form (ERF_WGSL included). */
export const GELU_GRAD_WGSL = /* wgsl */ `${ERF_WGSL}
fn gelu_grad_exact(x: f32) -> f32 {
  let c = clamp(x, -20.0, 20.0);
  return normal_cdf(x) + c * 0.398942280401432678 * exp(-0.5 * c * c);
}
fn gelu_grad_tanh(x: f32) -> f32 {
  let c = clamp(x, -10.0, 10.0);
  let k = 0.797884560802865356;
  let u = k * (c + 0.044715 * c * c * c);
  let e = exp(-2.0 * abs(u));
  let half1pt = select(e, 1.0, u >= 0.0) / (1.0 + e);
  let sech2 = 4.0 * e / ((1.0 + e) * (1.0 + e));
  let d = half1pt + 0.5 * c * sech2 * k * (1.0 + 0.134145 * c * c);
  return select(select(d, 0.0, x < -10.0), 1.0, x > 10.0);
}
fn gelu_grad(x: f32, tanh_form: bool) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return x; }
  return select(gelu_grad_exact(x), gelu_grad_tanh(x), tanh_form);
}`;

/** Inputs: grad [...], x [...] (the forward input); attrs { approximate: "none" | "tanh" } → same shape. */
export const geluGradKernel: WebGpuKernel = programKernel<GeluGradAttrs, [GpuTensor, GpuTensor]>(
  ([grad, x], { approximate }, out) =>
    geluFormProgram("gelu-grad", GELU_GRAD_WGSL, "gelu_grad", x, approximate === "tanh", grad, out),
);
