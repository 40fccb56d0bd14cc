// attention: score → mask → softmax → dropout → weighted-sum in one program, FlashAttention style: one workgroup per
// query row (b, h, i) walks the keys it may see in blocks of WG with a running max and sum, so the [L, S] weights never
// exist, and keys outside the row's causal/window band are never visited. The mask rule is mask.wgsl.ts's, the
// dropout bits are dropout.wgsl.ts's with i = the weight's index in [B, H, L, S], so the fused kernel hides and drops
// exactly what the chain does. The output row itself is the accumulator (any head dim Dv, no fixed-size array).
// A key weighed exactly 0 (masked, padded, dropped) is skipped in P · V, so not even a NaN or ±∞ of its value row
// reaches the row (FlashAttention semantics; PyTorch's math path gives 0 · NaN = NaN).
// With score or mask modifications (attention-mods.wgsl.ts) the same loop calls the generated mod_keep and mod_score
// per key, one pipeline per expression; the positional band still bounds the keys visited.
import type { AttentionAttrs } from "@attngraph/graph";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { attrsOf, input, optionalInput, type Call } from "./inputs.js";
import { writeOutput } from "./output.js";
import { DROPOUT_WGSL } from "./dropout.wgsl.js";
import { MASK_WGSL } from "./mask.wgsl.js";
import { packAttention } from "./attention-params.js";
import { bindMods, checkedMods, type FusedMods } from "./attention-mods.wgsl.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";

/** Params: the attention words (packAttention), then v's view. */
function program(
  call: Call,
  gpu: KernelContext,
  q: GpuTensor,
  k: GpuTensor,
  v: GpuTensor,
  pad: GpuTensor | undefined,
  a: AttentionAttrs,
  mods: FusedMods | undefined,
  out: GpuTensor,
): ProgramInfo {
  const [nb, nh, nl] = q.shape as [number, number, number, number];
  const p = new Params();
  const dropout = { rate: a.dropoutRate, seed: a.dropoutSeed, training: a.training };
  const { qv, kv, pv, hasPad, m, sc, dropping, d, group } = packAttention(p, q, k, pad, a, dropout);
  const vv = p.view(v);
  // Q K V PAD Y, then the modifications' gathered inputs.
  const mb = mods && bindMods(call, gpu, mods, p, 5);
  return {
    name: "attention",
    cacheKey: mods ? `attention:mods:${mods.key}` : "attention",
    code: () => /* wgsl */ `${PRELUDE}${MASK_WGSL}${DROPOUT_WGSL}${REDUCE_WGSL}
${storageBindings(["Q", "K", "V", "PAD", ...(mb?.names ?? [])])}
${mb?.wgsl ?? ""}
var<workgroup> ps: array<f32, ${WG}>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let i = wg.x; let h = wg.y; let b = wg.z; let t = lid.x;
  let nh = view_dim(${qv}u, 1u); let nl = view_dim(${qv}u, 2u); let nd = view_dim(${qv}u, 3u);
  let ns = view_dim(${kv}u, 2u); let ndv = view_dim(${vv}u, 3u);
  let kh = h / pu(${group}u);
  let qBase = view_offset(${qv}u) + b * view_stride(${qv}u, 0u) + h * view_stride(${qv}u, 1u) + i * view_stride(${qv}u, 2u);
  let qs = view_stride(${qv}u, 3u);
  let kBase = view_offset(${kv}u) + b * view_stride(${kv}u, 0u) + kh * view_stride(${kv}u, 1u);
  let ks2 = view_stride(${kv}u, 2u); let ks3 = view_stride(${kv}u, 3u);
  let vBase = view_offset(${vv}u) + b * view_stride(${vv}u, 0u) + kh * view_stride(${vv}u, 1u);
  let vs2 = view_stride(${vv}u, 2u); let vs3 = view_stride(${vv}u, 3u);
  let pBase = view_offset(${pv}u) + b * view_stride(${pv}u, 0u);
  let ps1 = view_stride(${pv}u, 1u);
  let hasPad = pu(${hasPad}u) != 0u;
  let scale = pf(${sc}u);
  let dropping = pu(${dropping}u) != 0u;
  let yo = ((b * nh + h) * nl + i) * ndv;
  let dropRow = ((b * nh + h) * nl + i) * ns; // index of weight [b, h, i, 0] in [B, H, L, S]

  // The keys this row may see by position: [first, end).
  let band = visible_keys(${m}u, i, ns);
  let first = band.x;
  let end = band.y;

  for (var dd = t; dd < ndv; dd += ${WG}u) { Y[yo + dd] = 0.0; }
  var mRun = neg_inf();
  var lRun = 0.0;
  var badRow = false;
  for (var s0 = first; s0 < end; s0 += ${WG}u) {
    let j = s0 + t;
    var x = neg_inf();
    var visible = false;
    var bad = false;
    if (j < end && visible_by_position(${m}u, i, j, ns) && !(hasPad && PAD[pBase + j * ps1] == 1.0)${mods ? " && mod_keep(b, h, i, j)" : ""}) {
      var raw = 0.0;
      for (var c = 0u; c < nd; c++) { raw = fma(Q[qBase + c * qs], K[kBase + j * ks2 + c * ks3], raw); }
      ${
        mods
          ? `let sm = mod_score(raw, scale, b, h, i, j);
      if (!is_neg_inf(sm)) {
        x = sm;
        bad = is_bad(sm);
        visible = !bad;
      }`
          : `if (!is_neg_inf(raw)) {
        x = scale * raw;
        bad = is_bad(x) || is_bad(raw);
        visible = !bad;
      }`
      }
    }
    let blockMax = reduce_max(t, select(neg_inf(), x, visible));
    let anyBad = reduce_or(t, bad); // called unconditionally: it holds barriers
    badRow = badRow || anyBad;
    let mNew = max(mRun, blockMax);
    var alpha = 1.0;
    if (!is_neg_inf(mNew)) { alpha = select(exp(mRun - mNew), 0.0, is_neg_inf(mRun)); }
    var pj = 0.0;
    if (visible) { pj = exp(x - mNew); }
    let blockSum = reduce_sum(t, pj);
    if (!is_neg_inf(mNew)) { lRun = lRun * alpha + blockSum; mRun = mNew; }
    if (dropping && visible && dropout_bits(pu(${d}u), dropRow + j) < pu(${d + 1}u)) { pj = 0.0; }
    ps[t] = pj;
    workgroupBarrier();
    let count = min(${WG}u, end - s0);
    for (var dd = t; dd < ndv; dd += ${WG}u) {
      var acc = Y[yo + dd] * alpha;
      for (var c = 0u; c < count; c++) { if (ps[c] != 0.0) { acc = fma(ps[c], V[vBase + (s0 + c) * vs2 + dd * vs3], acc); } }
      Y[yo + dd] = acc;
    }
    workgroupBarrier();
  }
  // Normalise (and undo dropout's expected shrink); a row that saw no key has sum 0 and gives zeros.
  var inv = 0.0;
  if (lRun > 0.0) { inv = select(1.0, pf(${d + 2}u), dropping) / lRun; }
  for (var dd = t; dd < ndv; dd += ${WG}u) { Y[yo + dd] = select(Y[yo + dd] * inv, nan(), badRow); }
}`,
    params: p,
    inputs: [q, k, v, pad ?? q, ...(mb?.inputs ?? [])],
    output: out,
    workgroups: [nl, nh, nb],
  };
}

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], optional keyPaddingMask [B, S], gathered g0 … →
 * [B, H, L, Dv]; attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training, scoreMod, maskMod,
 * inputs } (absent dropout attributes: none; absent modifications: none).
 */
export const attentionKernel: WebGpuKernel = async (call, gpu) => {
  const q = input(call, 0);
  const k = input(call, 1);
  const v = input(call, 2);
  const pad = optionalInput(call, 3);
  const attrs = attrsOf<AttentionAttrs>(call);
  const mods = await checkedMods(call, gpu, { q, k, pad }, attrs.scale, 4, false);
  return writeOutput(call, gpu, (out) => program(call, gpu, q, k, v, pad, attrs, mods, out));
};
