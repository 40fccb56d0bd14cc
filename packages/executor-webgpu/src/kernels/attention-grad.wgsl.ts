// The fused attention backward, FlashAttention style: `attention-lse` keeps one number per query row of the forward,
// and `attention-grad` recomputes each weight p_ij = exp(scale · q_i·k_j − lse_i) where it needs it, so no [L, S]
// buffer ever exists (the only scratch is δ, [B, H, L], for the key gradient).
// - attention-lse: one workgroup per query row (b, h, i); each thread keeps a running max and sum over its keys of the
//   row's causal/window band, then the workgroup merges them (max first). A row that sees no key gives exactly −∞; a
//   NaN or +∞ score makes it NaN, as it makes the forward's row NaN.
// - wrt q: one workgroup per query row, streaming its band's keys in blocks of WG (one key per thread: p, dP, dS into
//   workgroup memory), then each thread adds Σ_block dS_ij · k_j into its own elements of the dq row (the output row is
//   the accumulator, any head dim). δ_i = grad_i·out_i is a workgroup reduction at the start.
// - wrt k / v: one workgroup per key row (b, kh, j), streaming (h, i) over the query heads of kv head kh and the query
//   rows whose band holds j, in blocks of WG (one pair per thread), then Σ_block w · q_i (dk, w = dS_ij) or
//   Σ_block w · grad_i (dv, w = m_ij · p_ij); each block's sum is added to the running row, so long sums grow their
//   float32 error by blocks, not by terms. dk reads δ from a first pass into a [B, H, L] scratch buffer.
// Visibility is the forward's (MASK_WGSL plus key padding, a score of exactly −∞ hidden too); a hidden key's k and v
// rows are never read for that row, and a term of weight exactly 0 (hidden, dropped, no key seen) is never added, so a
// NaN in such a row reaches no gradient. Dropout keeps exactly the forward's elements (DROPOUT_WGSL on the weight's index
// ((b·H + h)·L + i)·S + j). Every input is read through its strides; outputs are dense.
// With score or mask modifications (attention-mods.wgsl.ts) the same loops call the generated mod_keep, mod_score and
// (for q and k) mod_dscore: p_ij = exp(s'_ij − lse_i), dS'_ij = p_ij (m_ij grad_i·v_j − δ_i), and q, k get
// dS'_ij · scale · ∂s'/∂score, the derivative evaluated only where dS' is not 0 (no 0 · ∞ NaN from a hidden key).
import type { AttentionGradAttrs, AttentionLseAttrs } from "@attngraph/graph";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseProgram } from "./elementwise.wgsl.js";
import { gatheredInputGrad } from "./attention-input-grad.js";
import { bindMods, checkedMods, type FusedMods } from "./attention-mods.wgsl.js";
import { attrsOf, input, optionalInput, type Call } from "./inputs.js";
import { writeOutput } from "./output.js";
import { DROPOUT_WGSL } from "./dropout.wgsl.js";
import { rowGrid, rowMain } from "./row-program.wgsl.js";
import { MASK_WGSL } from "./mask.wgsl.js";
import { type AttentionWords, packAttention } from "./attention-params.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";

/** WGSL: a view's buffer index of element [a, b, c, 0] of a rank-3 or rank-4 view (the row base). */
const ROW_WGSL = /* wgsl */ `
fn row_base(v: u32, a: u32, b: u32, c: u32) -> u32 {
  return view_offset(v) + a * view_stride(v, 0u) + b * view_stride(v, 1u) + c * view_stride(v, 2u);
}`;

/** WGSL: q_i·k_j over D, in the forward kernel's order (fma from c = 0). */
function dotQk(qBase: string, kBase: string): string {
  return `var raw = 0.0;
      for (var c = 0u; c < nd; c++) { raw = fma(Q[${qBase} + c * qs3], K[${kBase} + c * ks3], raw); }`;
}

/** Params: the attention words (packAttention, no dropout), rows. One workgroup per query row. */
function lseProgram(
  call: Call,
  gpu: KernelContext,
  q: GpuTensor,
  k: GpuTensor,
  pad: GpuTensor | undefined,
  a: AttentionLseAttrs,
  mods: FusedMods | undefined,
  out: GpuTensor,
): ProgramInfo {
  const [nb, nh, nl] = q.shape as [number, number, number, number];
  const rows = nb * nh * nl;
  const p = new Params();
  const { qv, kv, pv, hasPad, m, sc, group } = packAttention(p, q, k, pad, a, undefined);
  const r = p.u32(rows);
  const mb = mods && bindMods(call, gpu, mods, p, 4); // Q K PAD Y
  return {
    name: "attention-lse",
    cacheKey: mods ? `attention-lse:mods:${mods.key}` : "attention-lse",
    code: () => /* wgsl */ `${PRELUDE}${MASK_WGSL}${REDUCE_WGSL}${ROW_WGSL}
${storageBindings(["Q", "K", "PAD", ...(mb?.names ?? [])])}
${mb?.wgsl ?? ""}
${rowMain(
  r,
  /* wgsl */ `  let nh = view_dim(${qv}u, 1u); let nl = view_dim(${qv}u, 2u); let nd = view_dim(${qv}u, 3u);
  let ns = view_dim(${kv}u, 2u);
  let i = row % nl; let h = (row / nl) % nh; let b = row / (nl * nh);
  let kh = h / pu(${group}u);
  let qBase = row_base(${qv}u, b, h, i); let qs3 = view_stride(${qv}u, 3u);
  let kBase = row_base(${kv}u, b, kh, 0u); let ks2 = view_stride(${kv}u, 2u); let ks3 = view_stride(${kv}u, 3u);
  let pBase = view_offset(${pv}u) + b * view_stride(${pv}u, 0u); let ps1 = view_stride(${pv}u, 1u);
  let hasPad = pu(${hasPad}u) != 0u;
  let scale = pf(${sc}u);
  // The keys this row may see by position: [first, end).
  let band = visible_keys(${m}u, i, ns);
  let first = band.x;
  let end = band.y;
  var mx = neg_inf();
  var sum = 0.0;
  var bad = false;
  for (var j = first + t; j < end; j += ${WG}u) {
    if (!visible_by_position(${m}u, i, j, ns) || (hasPad && PAD[pBase + j * ps1] == 1.0)${mods ? " || !mod_keep(b, h, i, j)" : ""}) { continue; }
    ${dotQk("qBase", "kBase + j * ks2")}
    ${
      mods
        ? `let x = mod_score(raw, scale, b, h, i, j);
    if (is_neg_inf(x)) { continue; }
    if (is_bad(x)) { bad = true; continue; }`
        : `if (is_neg_inf(raw)) { continue; }
    let x = scale * raw;
    if (is_bad(x) || is_bad(raw)) { bad = true; continue; }
    if (is_neg_inf(x)) { continue; }`
    }
    if (x > mx) { sum = sum * exp(mx - x) + 1.0; mx = x; } else { sum = sum + exp(x - mx); }
  }
  let rowMax = reduce_max(t, mx);
  var part = 0.0;
  if (!is_neg_inf(mx)) { part = sum * exp(mx - rowMax); }
  let total = reduce_sum(t, part);
  let anyBad = reduce_or(t, bad);
  if (t == 0u) {
    var lse = neg_inf();
    if (!is_neg_inf(rowMax)) { lse = rowMax + log(total); }
    Y[row] = select(lse, nan(), anyBad);
  }`,
)}`,
    params: p,
    inputs: [q, k, pad ?? q, ...(mb?.inputs ?? [])],
    output: out,
    workgroups: rowGrid(rows),
  };
}

/** Params: grad view, out view, rows, Dv. One invocation per query row: δ = grad_i·out_i into dense [B, H, L]. */
function deltaProgram(grad: GpuTensor, o: GpuTensor, out: GpuTensor): ProgramInfo {
  const ndv = grad.shape[3]!;
  const rows = out.size;
  const p = new Params();
  const gv = p.view(grad);
  const ov = p.view(o);
  const r = p.u32(rows);
  p.u32(ndv);
  return elementwiseProgram({
    name: "attention-grad-delta",
    params: p,
    count: r,
    bindings: storageBindings(["G", "O"]),
    index: "row",
    body: /* wgsl */ `  let ndv = pu(${r + 1}u);
  let gb = view_at(${gv}u, row * ndv); let gs = view_stride(${gv}u, 3u);
  let ob = view_at(${ov}u, row * ndv); let os = view_stride(${ov}u, 3u);
  var d = 0.0;
  for (var c = 0u; c < ndv; c++) { d = fma(G[gb + c * gs], O[ob + c * os], d); }
  Y[row] = d;`,
    inputs: [grad, o],
    output: out,
  });
}

interface GradInputs {
  readonly q: GpuTensor;
  readonly k: GpuTensor;
  readonly v: GpuTensor;
  readonly out: GpuTensor;
  readonly grad: GpuTensor;
  readonly lse: GpuTensor;
  readonly pad: GpuTensor | undefined;
}

/** What the q, k and v programs are built from: the call, its inputs and attributes, its checked modifications. */
interface GradCall {
  readonly call: Call;
  readonly gpu: KernelContext;
  readonly x: GradInputs;
  readonly a: AttentionGradAttrs;
  readonly mods: FusedMods | undefined;
}

/** Where packCommon put each word: the attention words, then the views of v, grad and lse. */
interface CommonWords extends AttentionWords {
  readonly vv: number;
  readonly gv: number;
  readonly lv: number;
}

/** Packs the params every attention-grad program starts with (the forward's attention words, then its views). */
function packCommon(p: Params, x: GradInputs, a: AttentionGradAttrs): CommonWords {
  const dropout = { rate: a.dropoutRate, seed: a.dropoutSeed, training: a.training };
  const w = packAttention(p, x.q, x.k, x.pad, a, dropout);
  return { ...w, vv: p.view(x.v), gv: p.view(x.grad), lv: p.view(x.lse) };
}

/** WGSL: m_ij, the keep factor of weight index `idx` (1 without dropout). */
function keepWgsl(dropping: number, d: number, idx: string): string {
  return `select(1.0, select(0.0, pf(${d + 2}u), dropout_bits(pu(${d}u), ${idx}) >= pu(${d + 1}u)), pu(${dropping}u) != 0u)`;
}

/**
 * WGSL: the weight `w` of q or k with modifications, dS'_ij · scale · ∂s'/∂score; the derivative is evaluated only
 * where dS' is not 0 (an infinite derivative times 0 would be NaN).
 */
function dsModWgsl(w: string): string {
  return `${w} = pij * (keep * dp - delta);
        if (${w} != 0.0) { ${w} = ${w} * mod_dscore(raw, scale, b, h, i, j); }`;
}

/**
 * wrt q. Params: the common words (packCommon), the out view, rows. One workgroup per query row; bindings
 * Q K V O G LSE PAD and Y (8 storage buffers, WebGPU's default limit per stage).
 */
function dqProgram(g: GradCall, out: GpuTensor): ProgramInfo {
  const { call, gpu, x, a, mods } = g;
  const [nb, nh, nl] = x.q.shape as [number, number, number, number];
  const rows = nb * nh * nl;
  const p = new Params();
  const { qv, kv, vv, gv, lv, pv, ...c } = packCommon(p, x, a);
  const ov = p.view(x.out);
  const r = p.u32(rows);
  const mb = mods && bindMods(call, gpu, mods, p, 8);
  return {
    name: "attention-grad-q",
    cacheKey: mods ? `attention-grad-q:mods:${mods.key}` : "attention-grad-q",
    code: () => /* wgsl */ `${PRELUDE}${MASK_WGSL}${DROPOUT_WGSL}${REDUCE_WGSL}${ROW_WGSL}
${storageBindings(["Q", "K", "V", "O", "G", "LSE", "PAD", ...(mb?.names ?? [])])}
${mb?.wgsl ?? ""}
var<workgroup> dsBlk: array<f32, ${WG}>;
${rowMain(
  r,
  /* wgsl */ `  let nh = view_dim(${qv}u, 1u); let nl = view_dim(${qv}u, 2u); let nd = view_dim(${qv}u, 3u);
  let ns = view_dim(${kv}u, 2u); let ndv = view_dim(${vv}u, 3u);
  let i = row % nl; let h = (row / nl) % nh; let b = row / (nl * nh);
  let kh = h / pu(${c.group}u);
  let qBase = row_base(${qv}u, b, h, i); let qs3 = view_stride(${qv}u, 3u);
  let kBase = row_base(${kv}u, b, kh, 0u); let ks2 = view_stride(${kv}u, 2u); let ks3 = view_stride(${kv}u, 3u);
  let vBase = row_base(${vv}u, b, kh, 0u); let vs2 = view_stride(${vv}u, 2u); let vs3 = view_stride(${vv}u, 3u);
  let gBase = row_base(${gv}u, b, h, i); let gs3 = view_stride(${gv}u, 3u);
  let oBase = row_base(${ov}u, b, h, i); let os3 = view_stride(${ov}u, 3u);
  let pBase = view_offset(${pv}u) + b * view_stride(${pv}u, 0u); let ps1 = view_stride(${pv}u, 1u);
  let hasPad = pu(${c.hasPad}u) != 0u;
  let scale = pf(${c.sc}u);
  let lse = LSE[view_offset(${lv}u) + b * view_stride(${lv}u, 0u) + h * view_stride(${lv}u, 1u) + i * view_stride(${lv}u, 2u)];
  let yo = row * nd;
  let dropRow = row * ns; // index of weight [b, h, i, 0] in [B, H, L, S]

  var part = 0.0;
  for (var dd = t; dd < ndv; dd += ${WG}u) { part = fma(G[gBase + dd * gs3], O[oBase + dd * os3], part); }
  let delta = reduce_sum(t, part);
  for (var dd = t; dd < nd; dd += ${WG}u) { Y[yo + dd] = 0.0; }

  // The keys this row may see by position: [first, end); none at all when the row saw no key (lse −∞).
  let band = visible_keys(${c.m}u, i, ns);
  let first = band.x;
  let end = select(band.y, first, is_neg_inf(lse));
  for (var s0 = first; s0 < end; s0 += ${WG}u) {
    let j = s0 + t;
    var ds = 0.0;
    if (j < end && visible_by_position(${c.m}u, i, j, ns) && !(hasPad && PAD[pBase + j * ps1] == 1.0)${mods ? " && mod_keep(b, h, i, j)" : ""}) {
      ${dotQk("qBase", "kBase + j * ks2")}
      ${mods ? "let sm = mod_score(raw, scale, b, h, i, j);" : ""}
      if (!is_neg_inf(${mods ? "sm" : "raw"})) {
        let pij = exp(${mods ? "sm" : "scale * raw"} - lse);
        var dp = 0.0;
        for (var c = 0u; c < ndv; c++) { dp = fma(G[gBase + c * gs3], V[vBase + j * vs2 + c * vs3], dp); }
        let keep = ${keepWgsl(c.dropping, c.d, "dropRow + j")};
        ${mods ? dsModWgsl("ds") : "ds = scale * pij * (keep * dp - delta);"}
      }
    }
    dsBlk[t] = ds;
    workgroupBarrier();
    let count = min(${WG}u, end - s0);
    for (var dd = t; dd < nd; dd += ${WG}u) {
      var acc = 0.0;
      for (var c = 0u; c < count; c++) { let w = dsBlk[c]; if (w != 0.0) { acc = fma(w, K[kBase + (s0 + c) * ks2 + dd * ks3], acc); } }
      Y[yo + dd] = Y[yo + dd] + acc;
    }
    workgroupBarrier();
  }`,
)}`,
    params: p,
    inputs: [x.q, x.k, x.v, x.out, x.grad, x.lse, x.pad ?? x.q, ...(mb?.inputs ?? [])],
    output: out,
    workgroups: rowGrid(rows),
  };
}

/**
 * wrt k or v. Params: the common words (packCommon), rows. One workgroup per key row (b, kh, j).
 * Bindings: Q K V G LSE PAD DELTA and Y for k; Q K G LSE PAD and Y for v (v needs neither V nor δ).
 */
function dkvProgram(g: GradCall, wrt: "k" | "v", delta: GpuTensor | undefined, out: GpuTensor): ProgramInfo {
  const { call, gpu, x, a, mods } = g;
  const [nb, nkv, ns] = x.k.shape as [number, number, number, number];
  const rows = nb * nkv * ns;
  const p = new Params();
  const { qv, kv, vv, gv, lv, pv, ...c } = packCommon(p, x, a);
  const r = p.u32(rows);
  const isK = wrt === "k";
  const mb = mods && bindMods(call, gpu, mods, p, isK ? 8 : 6);
  // What each term multiplies: q_i (dk, D wide) or grad_i (dv, Dv wide).
  const src = isK ? { arr: "Q", view: qv } : { arr: "G", view: gv };
  const weight = isK
    ? `var dp = 0.0;
            for (var c = 0u; c < ndv; c++) { dp = fma(G[gBase + c * gs3], V[vBase + c * vs3], dp); }
            ${mods ? `let delta = DELTA[(b * nh + h) * nl + i];\n            ${dsModWgsl("w")}` : "w = scale * pij * (keep * dp - DELTA[(b * nh + h) * nl + i]);"}`
    : `w = keep * pij;`;
  return {
    name: `attention-grad-${wrt}`,
    cacheKey: mods ? `attention-grad-${wrt}:mods:${mods.key}` : `attention-grad-${wrt}`,
    code: () => /* wgsl */ `${PRELUDE}${MASK_WGSL}${DROPOUT_WGSL}${ROW_WGSL}
${storageBindings([...(isK ? ["Q", "K", "V", "G", "LSE", "PAD", "DELTA"] : ["Q", "K", "G", "LSE", "PAD"]), ...(mb?.names ?? [])])}
${mb?.wgsl ?? ""}
var<workgroup> wBlk: array<f32, ${WG}>;
var<workgroup> baseBlk: array<u32, ${WG}>;
${rowMain(
  r,
  /* wgsl */ `  let nh = view_dim(${qv}u, 1u); let nl = view_dim(${qv}u, 2u); let nd = view_dim(${qv}u, 3u);
  let nkv = view_dim(${kv}u, 1u); let ns = view_dim(${kv}u, 2u); let ndv = view_dim(${vv}u, 3u);
  let j = row % ns; let kh = (row / ns) % nkv; let b = row / (ns * nkv);
  let grp = pu(${c.group}u);
  let qs3 = view_stride(${qv}u, 3u);
  let kBase = row_base(${kv}u, b, kh, j); let ks3 = view_stride(${kv}u, 3u);
  let vBase = row_base(${vv}u, b, kh, j); let vs3 = view_stride(${vv}u, 3u);
  let gs3 = view_stride(${gv}u, 3u);
  let hasPad = pu(${c.hasPad}u) != 0u;
  let scale = pf(${c.sc}u);
  let nOut = ${isK ? "nd" : "ndv"};
  let xs3 = view_stride(${src.view}u, 3u);
  let yo = row * nOut;
  for (var dd = t; dd < nOut; dd += ${WG}u) { Y[yo + dd] = 0.0; }

  // The query rows whose band holds key j: [iFirst, iEnd) (j <= i + off; with a window, j > i + off − w); none when
  // the key is padded. Pairs (h, i) are numbered e = (h − kh · grp) · n + (i − iFirst).
  let off = pi(${c.m + 2}u);
  let win = i32(pu(${c.m + 1}u));
  let causal = pu(${c.m}u) != 0u;
  var iFirst = 0;
  var iEnd = i32(nl);
  if (causal) {
    iFirst = clamp(i32(j) - off, 0, i32(nl));
    if (win > 0) { iEnd = clamp(i32(j) - off + win, 0, i32(nl)); }
  }
  let padded = hasPad && PAD[view_offset(${pv}u) + b * view_stride(${pv}u, 0u) + j * view_stride(${pv}u, 1u)] == 1.0;
  var n = 0u;
  if (!padded && iEnd > iFirst) { n = u32(iEnd - iFirst); }
  let total = grp * n;
  for (var s0 = 0u; s0 < total; s0 += ${WG}u) {
    let e = s0 + t;
    var w = 0.0;
    var rb = 0u;
    if (e < total) {
      let h = kh * grp + e / n;
      let i = u32(iFirst) + e % n;
      let qBase = row_base(${qv}u, b, h, i);
      let gBase = row_base(${gv}u, b, h, i);
      rb = ${isK ? "qBase" : "gBase"};
      let lse = LSE[view_offset(${lv}u) + b * view_stride(${lv}u, 0u) + h * view_stride(${lv}u, 1u) + i * view_stride(${lv}u, 2u)];
      if (visible_by_position(${c.m}u, i, j, ns) && !is_neg_inf(lse)${mods ? " && mod_keep(b, h, i, j)" : ""}) {
        ${dotQk("qBase", "kBase")}
        ${mods ? "let sm = mod_score(raw, scale, b, h, i, j);" : ""}
        if (!is_neg_inf(${mods ? "sm" : "raw"})) {
          let pij = exp(${mods ? "sm" : "scale * raw"} - lse);
          let keep = ${keepWgsl(c.dropping, c.d, "((b * nh + h) * nl + i) * ns + j")};
          ${weight}
        }
      }
    }
    wBlk[t] = w;
    baseBlk[t] = rb;
    workgroupBarrier();
    let count = min(${WG}u, total - s0);
    for (var dd = t; dd < nOut; dd += ${WG}u) {
      var acc = 0.0;
      for (var c = 0u; c < count; c++) { let wc = wBlk[c]; if (wc != 0.0) { acc = fma(wc, ${src.arr}[baseBlk[c] + dd * xs3], acc); } }
      Y[yo + dd] = Y[yo + dd] + acc;
    }
    workgroupBarrier();
  }`,
)}`,
    params: p,
    inputs: [
      ...(isK ? [x.q, x.k, x.v, x.grad, x.lse, x.pad ?? x.q, delta!] : [x.q, x.k, x.grad, x.lse, x.pad ?? x.q]),
      ...(mb?.inputs ?? []),
    ],
    output: out,
    workgroups: rowGrid(rows),
  };
}

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], optional keyPaddingMask [B, S], gathered g0 … → lse [B, H, L];
 * attrs { causal, window, alignment, scale, scoreMod, maskMod, inputs }.
 */
export const attentionLseKernel: WebGpuKernel = async (call, gpu) => {
  const q = input(call, 0);
  const k = input(call, 1);
  const pad = optionalInput(call, 2);
  const attrs = attrsOf<AttentionLseAttrs>(call);
  const mods = await checkedMods(call, gpu, { q, k, pad }, attrs.scale, 3, false);
  return writeOutput(call, gpu, (out) => lseProgram(call, gpu, q, k, pad, attrs, mods, out));
};

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], out and grad [B, H, L, Dv], lse [B, H, L], optional
 * keyPaddingMask [B, S], gathered g0 …; attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training,
 * wrt, scoreMod, maskMod, inputs } → dq [B, H, L, D], dk [B, Hkv, S, D] or dv [B, Hkv, S, Dv], or a gathered input's
 * gradient (wrt g0 … g7, on the host: attention-input-grad.ts).
 */
export const attentionGradKernel: WebGpuKernel = async (call, gpu) => {
  const q = input(call, 0);
  const k = input(call, 1);
  const v = input(call, 2);
  const o = input(call, 3);
  const grad = input(call, 4);
  const lse = input(call, 5);
  const pad = optionalInput(call, 6);
  const attrs = attrsOf<AttentionGradAttrs>(call);
  const wrt = attrs.wrt;
  const x: GradInputs = { q, k, v, out: o, grad, lse, pad };
  if (wrt !== "q" && wrt !== "k" && wrt !== "v") return gatheredInputGrad(call, gpu, x, attrs);
  // dv needs no derivative of the score modification.
  const mods = await checkedMods(call, gpu, x, attrs.scale, 7, wrt !== "v");
  const g: GradCall = { call, gpu, x, a: attrs, mods };
  // The declaration's rule made outShape the shape of q, k or v, whichever wrt names.
  if (wrt === "q") return writeOutput(call, gpu, (out) => dqProgram(g, out));
  if (wrt === "v") return writeOutput(call, gpu, (out) => dkvProgram(g, "v", undefined, out));
  if (call.outShape.includes(0)) return gpu.alloc(call.outShape);
  const delta = gpu.alloc(lse.shape); // δ per query row: [B, H, L], what dk reads
  try {
    if (delta.size > 0) await gpu.run(deltaProgram(grad, o, delta));
    return await writeOutput(call, gpu, (out) => dkvProgram(g, "k", delta, out));
  } finally {
    gpu.release(delta);
  }
};
