// pad: x with `before` zeros and `after` zeros along one axis (negative counts from the end), the gradient of a slice.
// One invocation per output element: its index along the axis says whether it reads x (through x's strides) or is 0.
// Elements move as u32 words (as in copy.wgsl.ts), so x's values are copied bit for bit: NaN payloads and −0 included.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram, WORD_BINDINGS } from "./elementwise.wgsl.js";
import { programKernel } from "./output.js";
import type { PadAttrs } from "@attngraph/graph";

/**
 * Params: n, x view, inner (elements after the axis), the output's axis length, before, x's axis length. Shared with
 * position-embedding-grad, which is pad along the rows.
 */
export function padProgram(x: GpuTensor, axis: number, before: number, out: GpuTensor): ProgramInfo {
  const inner = out.shape.slice(axis + 1).reduce((a, d) => a * d, 1);
  const p = elementwiseParams(out.size);
  const xv = p.view(x);
  const w = p.u32(inner);
  p.u32(out.shape[axis]!);
  p.u32(before);
  p.u32(x.shape[axis]!);
  return elementwiseProgram({
    name: "pad",
    cacheKey: "pad-u32",
    params: p,
    bindings: WORD_BINDINGS,
    index: "o",
    body: /* wgsl */ `  let inner = pu(${w}u); let len = pu(${w + 1}u); let before = pu(${w + 2}u); let d = pu(${w + 3}u);
  let a = (o / inner) % len;
  var v = 0u;
  if (a >= before && a - before < d) {
    let outer = o / (inner * len);
    v = X[view_at(${xv}u, (outer * d + (a - before)) * inner + o % inner)];
  }
  Y[o] = v;`,
    inputs: [x],
    output: out,
  });
}

/** Input: x [...]; attrs { axis (negative from the end), before, after } → x's shape, the axis before + d + after long. */
export const padKernel: WebGpuKernel = programKernel<PadAttrs, [GpuTensor]>(([x], { axis, before }, out) =>
  padProgram(x, axis < 0 ? axis + x.rank : axis, before, out),
);
