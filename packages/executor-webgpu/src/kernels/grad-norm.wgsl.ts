// sum-squares and clip-by-norm: global gradient-norm clipping as torch.nn.utils.clip_grad_norm_ does it, on the GPU,
// nothing read back.
// - sum-squares: acc + Σ x². One workgroup: each invocation sums its strided share of x with Kahan compensation (a
//   share of a large gradient is long, and a plain float32 chain would lose digits), then the shares add as a tree
//   (REDUCE_WGSL). One workgroup is enough: it runs once per parameter per step, next to kernels that read x anyway.
// - clip-by-norm: x · min(1, maxNorm / (sqrt(total) + eps)) in float32, as torch computes clip_coef_clamped in the
//   gradients' dtype; a NaN total stays NaN (torch's clamp leaves NaN), so every clipped gradient is NaN then.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { input, optionalInput } from "./inputs.js";
import { programKernel, writeOutput } from "./output.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";
import type { ClipByNormAttrs } from "@attngraph/graph";

// ---- sum-squares ----

/** Params: x view, n, acc view (x's when absent), acc present. One workgroup. */
function sumSquaresProgram(x: GpuTensor, acc: GpuTensor | undefined, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const xv = p.view(x);
  const n = p.u32(x.size);
  const av = p.view(acc ?? x);
  const hasAcc = p.u32(acc ? 1 : 0);
  return {
    name: "sum-squares",
    cacheKey: "sum-squares",
    code: () => /* wgsl */ `${PRELUDE}${REDUCE_WGSL}
${storageBindings(["X", "A"])}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_id) lid: vec3u) {
  let t = lid.x;
  var s = 0.0;
  var c = 0.0;
  for (var i = t; i < pu(${n}u); i += ${WG}u) {
    let v = X[view_at(${xv}u, i)];
    let y = v * v - c;
    let z = s + y;
    c = (z - s) - y;
    s = z;
  }
  s = reduce_sum(t, s);
  if (t == 0u) {
    var total = s;
    if (pu(${hasAcc}u) != 0u) { total = A[view_offset(${av}u)] + s; }
    Y[0] = total;
  }
}`,
    params: p,
    // An absent acc is bound to x and never read.
    inputs: [x, acc ?? x],
    output: out,
    workgroups: [1, 1, 1],
  };
}

/** Inputs: x [...], acc [] or [1] (optional, the total so far) → [1]. */
export const sumSquaresKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0);
  const acc = optionalInput(call, 1);
  return writeOutput(call, gpu, (out) => sumSquaresProgram(x, acc, out));
};

// ---- clip-by-norm ----

/** Params: n, x view, total view, maxNorm, eps. */
function clipProgram(x: GpuTensor, total: GpuTensor, a: ClipByNormAttrs, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const xv = p.view(x);
  const tv = p.view(total);
  const mx = p.f32(a.maxNorm);
  const eps = p.f32(a.eps);
  return elementwiseProgram({
    name: "clip-by-norm",
    params: p,
    bindings: storageBindings(["X", "T"]),
    body: /* wgsl */ `  let coef = pf(${mx}u) / (sqrt(T[view_offset(${tv}u)]) + pf(${eps}u));
  // select, not min: min(NaN, 1) may be 1 on some GPUs; torch's clamp keeps NaN.
  Y[i] = X[view_at(${xv}u, i)] * select(coef, 1.0, coef > 1.0);`,
    inputs: [x, total],
    output: out,
  });
}

/** Inputs: x [...], sumSquares [] or [1]; attrs { maxNorm, eps } → x's shape. */
export const clipByNormKernel: WebGpuKernel = programKernel<ClipByNormAttrs, [GpuTensor, GpuTensor]>(
  ([x, total], a, out) => clipProgram(x, total, a, out),
);
