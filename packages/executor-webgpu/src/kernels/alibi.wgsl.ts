// alibi: the score scale plus ALiBi's linear bias, scale · s + m_h · (j − (i + off)), with off = 0 ("top-left") or
// S − L ("bottom-right"); −∞ stays −∞ whatever the scale (0 · −∞ would be NaN). Slopes live in a small constant
// buffer cached per device.
import { alibiSlopes, type AlibiAttrs } from "@attngraph/graph";
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { attrsOf, input } from "./inputs.js";
import { writeOutput } from "./output.js";
import { storageBindings } from "./shared.wgsl.js";

/** Params: n, scores view, scale, off. */
function program(
  scores: GpuTensor,
  slopes: GPUBuffer,
  scale: number,
  alignment: AlibiAttrs["alignment"],
  out: GpuTensor,
): ProgramInfo {
  const [, , nl, ns] = scores.shape as [number, number, number, number];
  const p = elementwiseParams(out.size);
  const sv = p.view(scores);
  const sc = p.f32(scale);
  const off = p.i32(alignment === "bottom-right" ? ns - nl : 0);
  return elementwiseProgram({
    name: "alibi",
    params: p,
    bindings: storageBindings(["X", "SLOPES"]),
    index: "o",
    body: /* wgsl */ `  let ns = view_dim(${sv}u, 3u); let nl = view_dim(${sv}u, 2u); let nh = view_dim(${sv}u, 1u);
  let j = o % ns; let i = (o / ns) % nl; let h = (o / (ns * nl)) % nh;
  let x = X[view_at(${sv}u, o)];
  let dist = f32(i32(j) - (i32(i) + pi(${off}u)));
  Y[o] = select(pf(${sc}u) * x + SLOPES[h] * dist, neg_inf(), is_neg_inf(x));`,
    inputs: [scores, slopes],
    output: out,
  });
}

/** Input: scores [B, H, L, S]; attrs { slopes (null = the paper's), scale, alignment } → same shape. */
export const alibiKernel: WebGpuKernel = async (call, gpu) => {
  const scores = input(call, 0);
  const { scale, alignment, slopes: given } = attrsOf<AlibiAttrs>(call);
  const slopes = given ?? alibiSlopes(scores.shape[1]!);
  const buffer = gpu.constants(`alibi-slopes:${slopes.join(",")}`, () => Float32Array.from(slopes));
  return writeOutput(call, gpu, (out) => program(scores, buffer, scale, alignment, out));
};
