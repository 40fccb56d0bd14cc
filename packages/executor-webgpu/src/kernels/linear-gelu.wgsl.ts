// linear-gelu: gelu(x · Wᵀ + b), the fused first half of a transformer MLP that the scheduler puts in place of
// projection → gelu when nothing watches the pre-activation. The projection kernel's tiled matmul with a gelu
// epilogue (matmul.wgsl.ts): each element of x · Wᵀ + b is finished in float32 exactly as projection stores it, then
// goes through the gelu kernel's own WGSL function (GELU_WGSL) instead of a second pass over memory, so the numbers are
// those of the unfused pair and the pre-activation is never written.
import type { WebGpuKernel } from "../executor.js";
import { attrsOf } from "./inputs.js";
import { linear, linearInputs } from "./projection.wgsl.js";
import type { LinearGeluAttrs } from "@attngraph/graph";

/** Inputs: x [..., In], weight [Out, In], optional bias [Out]; attrs { approximate: "none" | "tanh" } → [..., Out]. */
export const linearGeluKernel: WebGpuKernel = async (call, gpu) => {
  const { x, w, b } = linearInputs(call);
  const { approximate } = attrsOf<LinearGeluAttrs>(call);
  return linear(call, gpu, x, w, b, approximate);
};
