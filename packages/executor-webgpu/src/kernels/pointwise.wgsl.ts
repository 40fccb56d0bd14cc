// pointwise: any elementwise expression (@attngraph/graph's expression form, reads with no index) as a WGSL shader
// generated per expression (exprWgsl, the generator of the attention modifications), one invocation per element over
// inputs of one shape, any strides. silu, its gradient and every other op declared by an expression run here.
import { exprKey, pointwiseExprOf, POINTWISE_SLOTS, type Expr } from "@attngraph/graph";
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { optionalInput } from "./inputs.js";
import { writeOutput } from "./output.js";
import { exprWgsl } from "./expr.wgsl.js";
import { storageBindings } from "./shared.wgsl.js";

function program(expr: Expr, inputs: readonly (GpuTensor | undefined)[], out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const present = inputs.flatMap((t, k) => (t === undefined ? [] : [{ t, k, view: p.view(t) }]));
  const args = POINTWISE_SLOTS.map((_, k) => {
    const at = present.findIndex((x) => x.k === k);
    return at < 0 ? "0.0" : `X${k}[view_at(${present[at]!.view}u, i)]`;
  });
  const slots = present.map((x) => x.k).join("");
  return elementwiseProgram({
    name: "pointwise",
    // The views' words are params: one shader per expression and set of present inputs serves every shape and layout.
    cacheKey: `pointwise:${slots}:${exprKey(expr)}`,
    params: p,
    helpers: () => `\n${exprWgsl(expr, "pw", [], POINTWISE_SLOTS)}`,
    bindings: storageBindings(present.map((x) => `X${x.k}`)),
    body: /* wgsl */ `  Y[i] = pw(${args.join(", ")});`,
    inputs: present.map((x) => x.t),
    output: out,
  });
}

/** Inputs: x0 [...], x1…x3 [...] (optional, x0's shape) → x0's shape. */
export const pointwiseKernel: WebGpuKernel = async (call, gpu) => {
  const inputs = POINTWISE_SLOTS.map((_, i) => optionalInput(call, i)); // x0 is required: present
  // The declaration checked the expression against the present inputs; this is the same checked object, cached.
  const present = POINTWISE_SLOTS.filter((_, i) => inputs[i] !== undefined);
  const expr = pointwiseExprOf(call.attrs["expr"], `${call.node}.expr`, present);
  return writeOutput(call, gpu, (out) => program(expr, inputs, out));
};
