// mask: scores with −∞ where a mask hides the key (causal with an alignment, sliding window, key padding; composed by
// "or"). With off = 0 ("top-left") or S − L ("bottom-right"), query i sees key j when j <= i + off (causal) and, with a
// window w, j > i + off − w; a key with keyPaddingMask[b, j] = 1 is hidden for every query. The fused attention kernel
// uses the same rule (MASK_WGSL) and the same host-side padding check.
import { AttnGraphError, describe, type Tensor } from "@attngraph/tensor";
import type { MaskAttrs } from "@attngraph/graph";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { attrError, expectDim, expectRank, optionalInput, requireInput, type Call } from "./checks.js";
import { PRELUDE, Params, WG, elementwiseGrid, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks), re-exported under the names this package always used.
import { checkMaskAttrs, maskOffset, windowOf } from "@attngraph/graph";
export { checkMaskAttrs };

/** WGSL: whether query i sees key j by position; `m` is the word of (causal, window, off) in the params. */
export const MASK_WGSL = /* wgsl */ `
fn visible_by_position(m: u32, i: u32, j: u32, ns: u32) -> bool {
  let off = pi(m + 2u);
  let hi = select(i32(ns) - 1, i32(i) + off, pu(m) != 0u);
  let win = i32(pu(m + 1u));
  let lo = select(-1, i32(i) + off - win, win > 0);
  return i32(j) > lo && i32(j) <= hi;
}`;

/** Packs (causal, window or 0, off) for MASK_WGSL and returns the word position. */
export function packMask(p: Params, attrs: MaskAttrs, nl: number, ns: number): number {
  const at = p.u32(attrs.causal ? 1 : 0);
  p.u32(windowOf(attrs));
  p.i32(maskOffset(attrs.alignment, nl, ns));
  return at;
}

/**
 * Checks a key padding mask [B, S] before anything is encoded: shape, and every value exactly 0 or 1 (a 2 or a NaN is
 * a caller's bug, never silently "not padded"). The values come from the uploaded host tensor, so this costs no
 * readback for an input; a padding mask computed on the GPU is read back once.
 */
export async function checkKeyPadding(call: Call, gpu: KernelContext, pad: GpuTensor, nb: number, ns: number, batchOf: string): Promise<void> {
  expectRank(call, "keyPaddingMask", pad, 2, "[B, S]");
  expectDim(call, "keyPaddingMask", `batch B of the padding mask must match the ${batchOf}`, nb, pad.shape[0]!, pad);
  expectDim(call, "keyPaddingMask", "padding mask length must equal the key length S", ns, pad.shape[1]!, pad);
  const values: Tensor = await gpu.hostValues(pad);
  const flat = values.toFloat32Array();
  const bad = flat.findIndex((v) => v !== 0 && v !== 1);
  if (bad >= 0) {
    const subject = `${call.node}.keyPaddingMask`;
    const got = `${flat[bad]} at [${Math.floor(bad / ns)}, ${bad % ns}]`;
    throw new AttnGraphError("input", describe(subject, "key padding values must be 1 (padded key) or 0 (real key)", "0 or 1", got), {
      subject,
      expected: "0 or 1",
      got,
    });
  }
}

/** Params: scores view, pad view (or the scores view again), hasPad, mask words, n. One invocation per output element. */
function program(scores: GpuTensor, pad: GpuTensor | undefined, attrs: MaskAttrs, out: GpuTensor): ProgramInfo {
  const [, , nl, ns] = scores.shape as [number, number, number, number];
  const p = new Params();
  const sv = p.view(scores);
  const pv = p.view(pad ?? scores);
  const hasPad = p.u32(pad ? 1 : 0);
  const m = packMask(p, attrs, nl, ns);
  const n = p.u32(out.size);
  return {
    name: "mask",
    cacheKey: "mask",
    code: () => /* wgsl */ `${PRELUDE}${MASK_WGSL}
${storageBindings(["X", "PAD"])}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let o = flat_id(g, nw);
  if (o >= pu(${n}u)) { return; }
  let ns = view_dim(${sv}u, 3u); let nl = view_dim(${sv}u, 2u); let nh = view_dim(${sv}u, 1u);
  let j = o % ns; let i = (o / ns) % nl; let b = o / (ns * nl * nh);
  var hidden = !visible_by_position(${m}u, i, j, ns);
  if (pu(${hasPad}u) != 0u) {
    hidden = hidden || PAD[view_offset(${pv}u) + b * view_stride(${pv}u, 0u) + j * view_stride(${pv}u, 1u)] == 1.0;
  }
  let x = X[view_at(${sv}u, o)];
  Y[o] = select(x, neg_inf(), hidden);
}`,
    params: p,
    inputs: [scores, pad ?? scores],
    output: out,
    workgroups: elementwiseGrid(out.size),
  };
}

/** Inputs: scores [B, H, L, S], optional keyPaddingMask [B, S] → [B, H, L, S]; attrs { causal, window, alignment }. */
export const maskKernel: WebGpuKernel = async (call, gpu) => {
  const scores = requireInput(call, 0, "scores");
  const pad = optionalInput(call, 1, "keyPaddingMask");
  const attrs = checkMaskAttrs(call);
  expectRank(call, "scores", scores, 4, "[B, H, L, S]");
  if (pad !== undefined) await checkKeyPadding(call, gpu, pad, scores.shape[0]!, scores.shape[3]!, "scores");
  const out = gpu.alloc(scores.shape);
  await gpu.run(program(scores, pad, attrs, out));
  return out;
};
