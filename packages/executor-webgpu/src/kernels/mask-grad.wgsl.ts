// mask-grad: the input gradient of mask and ALiBi (ops that scale visible scores and hide others as −∞), read from
// the forward output: out = 0 where masked is −∞ (found by its bits), scale · grad everywhere else (a NaN or +∞ in
// masked included). One invocation per element; grad and masked may have any strides.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { programKernel } from "./output.js";
import { storageBindings } from "./shared.wgsl.js";
import type { MaskGradAttrs } from "@attngraph/graph";

/** Params: n, grad view, masked view, scale. */
function program(grad: GpuTensor, masked: GpuTensor, scale: number, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const gv = p.view(grad);
  const mv = p.view(masked);
  const sc = p.f32(scale);
  return elementwiseProgram({
    name: "mask-grad",
    params: p,
    bindings: storageBindings(["G", "M"]),
    body: /* wgsl */ `  let hidden = is_neg_inf(M[view_at(${mv}u, i)]);
  var v = 0.0;
  if (!hidden) { v = pf(${sc}u) * G[view_at(${gv}u, i)]; }
  Y[i] = v;`,
    inputs: [grad, masked],
    output: out,
  });
}

/** Inputs: grad [...], masked [...] (the forward output, −∞ = hidden); attrs { scale } → same shape. */
export const maskGradKernel: WebGpuKernel = programKernel<MaskGradAttrs, [GpuTensor, GpuTensor]>(
  ([grad, masked], { scale }, out) => program(grad, masked, scale, out),
);
