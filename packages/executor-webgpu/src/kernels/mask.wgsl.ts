// mask: scores with −∞ where a mask hides the key (causal with an alignment, sliding window, key padding, a user 0/1
// mask; composed by "or"), and `scale · score + bias` where none does. With off = 0 ("top-left") or S − L
// ("bottom-right"), query i sees key j when j <= i + off (causal) and, with a window w, j > i + off − w; a key with
// keyPaddingMask[b, j] = 1 is hidden for every query; a user mask entry of 0 hides its (b, h, i, j). A score that is
// already −∞ (an earlier mask) stays −∞ whatever the scale and bias, as in the reference. The fused attention kernel
// uses the same positional rule (MASK_WGSL) and the same host-side padding check.
import type { AnyTensor } from "@attngraph/tensor";
import type { MaskAttrs, MaskGeometry } from "@attngraph/graph";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { attrsOf, input, optionalInput, type Call } from "./inputs.js";
import { writeOutput } from "./output.js";
import { type Params, storageBindings } from "./shared.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks): the mask values' check, and the user mask's strides over
// the scores (whose shape checks the declaration makes too).
import {
  findNonBinary,
  keyPaddingError,
  maskOffset,
  nonBinaryMaskError,
  userMaskStrides,
  windowOf,
} from "@attngraph/graph";

/**
 * WGSL: whether query i sees key j by position (`visible_by_position`), and the keys [first, end) query i sees
 * (`visible_keys`: the same band, clamped to [0, ns), for the fused kernels that walk only those keys); `m` is the word
 * of (causal, window, off) in the params.
 */
export const MASK_WGSL = /* wgsl */ `
fn visible_by_position(m: u32, i: u32, j: u32, ns: u32) -> bool {
  let off = pi(m + 2u);
  let hi = select(i32(ns) - 1, i32(i) + off, pu(m) != 0u);
  let win = i32(pu(m + 1u));
  let lo = select(-1, i32(i) + off - win, win > 0);
  return i32(j) > lo && i32(j) <= hi;
}
fn visible_keys(m: u32, i: u32, ns: u32) -> vec2u {
  let off = pi(m + 2u);
  let win = i32(pu(m + 1u));
  let hi = select(i32(ns) - 1, i32(i) + off, pu(m) != 0u);
  let lo = select(-1, i32(i) + off - win, win > 0);
  return vec2u(u32(max(0, lo + 1)), u32(clamp(hi + 1, 0, i32(ns))));
}`;

/** Packs (causal, window or 0, off) for MASK_WGSL and returns the word position. */
export function packMask(p: Params, attrs: MaskGeometry, nl: number, ns: number): number {
  const at = p.u32(attrs.causal ? 1 : 0);
  p.u32(windowOf(attrs));
  p.i32(maskOffset(attrs.alignment, nl, ns));
  return at;
}

/**
 * Checks a key padding mask [B, S] (its shape is the declaration's) before anything is encoded: every value exactly 0
 * or 1 (a 2 or a NaN is a caller's bug, never silently "not padded"). The values come from the uploaded host tensor,
 * so this costs no readback for an input; a padding mask computed on the GPU is read back once.
 */
export async function checkKeyPadding(call: Call, gpu: KernelContext, pad: GpuTensor): Promise<void> {
  const ns = pad.shape[1]!;
  const values: AnyTensor = await gpu.hostValues(pad);
  const flat = values.toFloat32Array();
  const bad = flat.findIndex((v) => v !== 0 && v !== 1);
  if (bad >= 0) throw keyPaddingError(call, flat[bad], Math.floor(bad / ns), bad % ns);
}

/** A user mask or bias with its strides over [B, H, L, S] (0 on the axes it broadcasts over). */
interface UserInput {
  readonly t: GpuTensor;
  readonly strides: readonly [number, number, number, number];
}

/**
 * Checks a user mask or bias against scores [B, H, L, S] (shared rule: rank 2, 3 or 4, dims equal or 1). A mask's values
 * must each be exactly 0 or 1, checked on the host like padding flags (free for an upload, one readback otherwise).
 */
async function userInput(
  call: Call,
  gpu: KernelContext,
  field: "mask" | "bias",
  t: GpuTensor,
  scores: GpuTensor,
): Promise<UserInput> {
  const strides = userMaskStrides(call, field, scores.shape, t);
  if (field === "mask") {
    const bad = findNonBinary((await gpu.hostValues(t)).toFloat32Array(), t.shape);
    if (bad !== undefined) throw nonBinaryMaskError(call, field, bad);
  }
  return { t, strides };
}

/** Packs (present, offset, strides over B, H, L, S) of a user input for `user_at`, and returns the word position. */
function packUser(p: Params, u: UserInput | undefined): number {
  const at = p.u32(u ? 1 : 0);
  p.u32(u ? u.t.offset : 0);
  for (let d = 0; d < 4; d++) p.u32(u ? u.strides[d]! : 0);
  return at;
}

/**
 * Params: n, scores view, pad view (or the scores view again), hasPad, mask words, user mask words, bias words, scale.
 * One invocation per output element. Absent inputs are bound to the scores buffer and never read.
 */
function program(
  scores: GpuTensor,
  pad: GpuTensor | undefined,
  user: UserInput | undefined,
  bias: UserInput | undefined,
  attrs: MaskGeometry,
  scale: number,
  out: GpuTensor,
): ProgramInfo {
  const [, , nl, ns] = scores.shape as [number, number, number, number];
  const p = elementwiseParams(out.size);
  const sv = p.view(scores);
  const pv = p.view(pad ?? scores);
  const hasPad = p.u32(pad ? 1 : 0);
  const m = packMask(p, attrs, nl, ns);
  const um = packUser(p, user);
  const ub = packUser(p, bias);
  const sc = p.f32(scale);
  return elementwiseProgram({
    name: "mask",
    cacheKey: "mask-user",
    params: p,
    helpers: /* wgsl */ `${MASK_WGSL}
// The buffer index of a user input's element for scores index (b, h, i, j), from words (present, offset, 4 strides).
fn user_at(u: u32, b: u32, h: u32, i: u32, j: u32) -> u32 {
  return pu(u + 1u) + b * pu(u + 2u) + h * pu(u + 3u) + i * pu(u + 4u) + j * pu(u + 5u);
}`,
    bindings: storageBindings(["X", "PAD", "UM", "UB"]),
    index: "o",
    body: /* wgsl */ `  let ns = view_dim(${sv}u, 3u); let nl = view_dim(${sv}u, 2u); let nh = view_dim(${sv}u, 1u);
  let j = o % ns; let i = (o / ns) % nl; let h = (o / (ns * nl)) % nh; let b = o / (ns * nl * nh);
  let x = X[view_at(${sv}u, o)];
  var hidden = !visible_by_position(${m}u, i, j, ns) || is_neg_inf(x);
  if (pu(${hasPad}u) != 0u) {
    hidden = hidden || PAD[view_offset(${pv}u) + b * view_stride(${pv}u, 0u) + j * view_stride(${pv}u, 1u)] == 1.0;
  }
  if (pu(${um}u) != 0u) { hidden = hidden || UM[user_at(${um}u, b, h, i, j)] == 0.0; }
  // scale 1 and no bias leave a visible score's bits untouched (no multiply a driver might flush a denormal in).
  var y = x;
  let scale = pf(${sc}u);
  if (scale != 1.0) { y = scale * x; }
  if (pu(${ub}u) != 0u) { y = y + UB[user_at(${ub}u, b, h, i, j)]; }
  Y[o] = select(y, neg_inf(), hidden);`,
    inputs: [scores, pad ?? scores, user?.t ?? scores, bias?.t ?? scores],
    output: out,
  });
}

/**
 * Inputs: scores [B, H, L, S], optional keyPaddingMask [B, S], mask and bias ([L, S], [B, L, S] or [B, H, L, S], dims
 * of 1 broadcast) → [B, H, L, S]; attrs { causal, window, alignment, scale }.
 */
export const maskKernel: WebGpuKernel = async (call, gpu) => {
  const scores = input(call, 0);
  const pad = optionalInput(call, 1);
  const mask = optionalInput(call, 2);
  const bias = optionalInput(call, 3);
  const attrs = attrsOf<MaskAttrs>(call);
  if (pad !== undefined) await checkKeyPadding(call, gpu, pad);
  const user = mask && (await userInput(call, gpu, "mask", mask, scores));
  const add = bias && (await userInput(call, gpu, "bias", bias, scores));
  return writeOutput(call, gpu, (out) => program(scores, pad, user, add, attrs, attrs.scale, out));
};
