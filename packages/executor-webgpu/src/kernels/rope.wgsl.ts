// rope: rotary position embedding, split-half convention (GPT-NeoX, Llama): dim i turns with dim i + r/2 by the angle
// θ = (positionOffset + l) · base^(−2i/r). The cos/sin table is computed on the host in float64 (float32 angles lose
// the low bits at large positions) and kept per device in a constant buffer [L, r/2, 2]. With `inverse` (RoPE's
// backward, the rotation's transpose) the angle is −θ: the same table, its sines multiplied by −1 (exact).
import type { RopeAttrs } from "@attngraph/graph";
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { attrsOf, input } from "./inputs.js";
import { writeOutput } from "./output.js";
import { attrError } from "@attngraph/graph";
import { storageBindings } from "./shared.wgsl.js";

/** cos and sin of every (position, frequency), interleaved: [L, r/2, 2]. */
function rotaryTable(nl: number, r: number, base: number, positionOffset: number): Float32Array {
  const half = r / 2;
  const t = new Float32Array(nl * half * 2);
  for (let l = 0; l < nl; l++) {
    for (let i = 0; i < half; i++) {
      const theta = (positionOffset + l) * base ** ((-2 * i) / r);
      t[(l * half + i) * 2] = Math.cos(theta);
      t[(l * half + i) * 2 + 1] = Math.sin(theta);
    }
  }
  return t;
}

/** Params: n, x view, half (r/2), the sines' sign (−1 for inverse, else 1). */
function program(x: GpuTensor, table: GPUBuffer, r: number, inverse: boolean, out: GpuTensor): ProgramInfo {
  const p = elementwiseParams(out.size);
  const xv = p.view(x);
  const hf = p.u32(r / 2);
  const sg = p.f32(inverse ? -1 : 1);
  return elementwiseProgram({
    name: "rope",
    params: p,
    bindings: storageBindings(["X", "ROT"]),
    index: "o",
    body: /* wgsl */ `  let nd = view_dim(${xv}u, 3u); let nl = view_dim(${xv}u, 2u);
  let d = o % nd; let l = (o / nd) % nl;
  let half = pu(${hf}u);
  let row = o - d; // element [b, h, l, 0] in row-major order
  let sd = view_stride(${xv}u, 3u);
  let base = view_at(${xv}u, row);
  if (d >= 2u * half) { Y[o] = X[base + d * sd]; return; }
  let i = select(d, d - half, d >= half);
  let c = ROT[(l * half + i) * 2u];
  let s = pf(${sg}u) * ROT[(l * half + i) * 2u + 1u];
  let x1 = X[base + i * sd];
  let x2 = X[base + (i + half) * sd];
  Y[o] = select(x1 * c - x2 * s, x2 * c + x1 * s, d >= half);`,
    inputs: [x, table],
    output: out,
  });
}

/** Input: x [B, H, L, D]; attrs { base, rotaryDim (null = D), positionOffset, inverse (absent = false) } → [B, H, L, D]. */
export const ropeKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0);
  const { base, positionOffset, rotaryDim, inverse } = attrsOf<RopeAttrs>(call);
  // Kept from the declaration: it lets a dim name through as positionOffset (bound per run), which no kernel can use.
  if (typeof positionOffset !== "number")
    throw attrError(
      call,
      "positionOffset",
      "an integer >= 0 (a dim name must be bound before the kernel runs)",
      positionOffset,
    );
  const r = rotaryDim ?? x.shape[3]!;
  const nl = x.shape[2]!;
  const table = gpu.constants(`rope:${nl}:${r}:${base}:${positionOffset}`, () =>
    rotaryTable(nl, r, base, positionOffset),
  );
  return writeOutput(call, gpu, (out) => program(x, table, r, inverse, out));
};
