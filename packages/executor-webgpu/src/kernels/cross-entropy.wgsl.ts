// cross-entropy (F.cross_entropy) of logits [..., V] against int32 targets [...]: per position
// loss = log Σ exp(x − max) + (max − x[target]), one workgroup per position with workgroup reductions (REDUCE_WGSL).
// Stable: the row max is subtracted before exp, and (max − x[target]) is taken before adding the log-sum, so logits of
// 1e4 lose nothing to their size. A position whose target is ignoreIndex gets loss 0. NaN and ±∞ give what IEEE
// arithmetic gives the reference (a NaN or +∞ logit, or a row of only −∞: NaN; a −∞ target logit: +∞), decided on the
// values' bits: a driver may compute exp(NaN) as +∞ (SwiftShader does), and WGSL lets a compiler assume no NaN or ∞.
// −∞ logits are skipped in the sum (exp(−∞) = 0 by definition, whatever a driver's exp does with it).
// "none" writes the losses as the output; "mean" and "sum" write them to a scratch [N] that a second program adds up
// in one workgroup. The count of counted positions for the mean comes from the targets' host copy, which the range
// check reads anyway (targets in [0, V) or ignoreIndex, checked before anything is encoded); no counted position gives
// a mean of 0, not 0/0.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { rowProgram } from "./row-program.wgsl.js";
import type { KernelContext } from "../kernel-context.js";
import { attrsOf, input, type Call } from "./inputs.js";
import { PRELUDE, Params, WG, storageBindings } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";
// Shared by every executor (@attngraph/graph kernel-checks): the targets' range, read from their values.
import { findBadIndex, type CrossEntropyAttrs } from "@attngraph/graph";

/**
 * WGSL statements of one position's softmax statistics over its `nv` logits `X[base + j * xs]` in a workgroup (thread
 * `t`, REDUCE_WGSL bound): `mx` the max of the logits that are not NaN or +∞, `bad` whether any is, and
 * `s` = Σ exp(x − mx) over the logits that are not −∞ (0 when bad). Shared with cross-entropy-grad.
 */
export const LOGITS_ROW_WGSL = /* wgsl */ `
  var mx = neg_inf();
  var bad = false;
  for (var j = t; j < nv; j += ${WG}u) {
    let x = X[base + j * xs];
    if (is_bad(x)) { bad = true; } else { mx = max(mx, x); }
  }
  mx = reduce_max(t, mx);
  bad = reduce_or(t, bad);
  var s = 0.0;
  for (var j = t; j < nv; j += ${WG}u) {
    let x = X[base + j * xs];
    if (!bad && !is_neg_inf(x)) { s += exp(x - mx); }
  }
  s = reduce_sum(t, s);`;

/**
 * The targets' host values checked (each in [0, V) or ignoreIndex, else findBadIndex's error) before anything is
 * encoded, and the count of counted positions (those whose target is not ignoreIndex). Shared with cross-entropy-grad.
 */
export async function checkedTargetCount(
  call: Call,
  gpu: KernelContext,
  targets: GpuTensor,
  nv: number,
  ignoreIndex: number | null,
): Promise<number> {
  const t = (await gpu.hostValues(targets)).toInt32Array();
  const bad = findBadIndex(call, "targets", t, targets.shape, nv, "target", ignoreIndex);
  if (bad) throw bad;
  return ignoreIndex === null ? t.length : t.reduce((k, id) => k + (id === ignoreIndex ? 0 : 1), 0);
}

/**
 * Params: logits view, targets view, rows N, V, the logits' last stride, hasIgnore, ignoreIndex. One workgroup per
 * position (a 2-D grid past 65535); writes loss[row] densely.
 */
function lossProgram(logits: GpuTensor, targets: GpuTensor, ignoreIndex: number | null, out: GpuTensor): ProgramInfo {
  const nv = logits.shape[logits.rank - 1]!;
  const rows = targets.size;
  const p = new Params();
  const lv = p.view(logits);
  const tv = p.view(targets);
  const r = p.u32(rows);
  const v = p.u32(nv);
  const ls = p.u32(logits.strides[logits.rank - 1]!);
  const ig = p.u32(ignoreIndex === null ? 0 : 1);
  p.i32(ignoreIndex ?? 0);
  return rowProgram({
    name: "cross-entropy",
    params: p,
    count: r,
    rows,
    helpers: /* wgsl */ `
var<private> POS_INF_BITS: u32 = 0x7f800000u;`,
    bindings: storageBindings(["X", "T"], { T: "i32" }),
    body: /* wgsl */ `  let cls = T[view_at(${tv}u, row)];
  let skip = pu(${ig}u) != 0u && cls == pi(${ig + 1}u);
  // An ignored position reads nothing, but still meets every barrier of the reductions: the skip comes from a storage
  // load, which WGSL's uniformity analysis does not let a barrier depend on.
  let nv = select(pu(${v}u), 0u, skip); let xs = pu(${ls}u);
  let base = view_at(${lv}u, row * pu(${v}u));${LOGITS_ROW_WGSL}
  if (t == 0u) {
    var loss = 0.0;
    if (!skip) {
      let xt = X[base + u32(cls) * xs];
      if (bad || is_neg_inf(mx)) { loss = nan(); }
      else if (is_neg_inf(xt)) { loss = bitcast<f32>(POS_INF_BITS); }
      else { loss = log(s) + (mx - xt); }
    }
    Y[row] = loss;
  }`,
    inputs: [logits, targets],
    output: out,
  });
}

/**
 * Params: N, mean (1) or sum (0), the count of counted positions. One workgroup adds the N losses; a NaN loss makes
 * the result NaN (found by its bits, like the losses' own specials).
 */
function reduceProgram(losses: GpuTensor, mean: boolean, count: number, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const n = p.u32(losses.size);
  const m = p.u32(mean ? 1 : 0);
  const c = p.f32(count);
  return {
    name: "cross-entropy-reduce",
    cacheKey: "cross-entropy-reduce",
    code: () => /* wgsl */ `${PRELUDE}${REDUCE_WGSL}
${storageBindings(["L"])}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_id) lid: vec3u) {
  let t = lid.x;
  var s = 0.0;
  var nanSeen = false;
  for (var i = t; i < pu(${n}u); i += ${WG}u) {
    let v = L[i];
    if ((bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u) { nanSeen = true; } else { s += v; }
  }
  s = reduce_sum(t, s);
  nanSeen = reduce_or(t, nanSeen);
  let count = pf(${c}u);
  if (t == 0u) {
    var y = s;
    if (pu(${m}u) != 0u) { y = select(s / count, 0.0, count == 0.0); }
    Y[0] = select(y, nan(), nanSeen);
  }
}`,
    params: p,
    inputs: [losses],
    output: out,
    workgroups: [1, 1, 1],
  };
}

/**
 * Inputs: logits [..., V] float32, targets [...] int32; attrs { ignoreIndex, reduction } → [] for "mean"/"sum",
 * targets' shape for "none".
 */
export const crossEntropyKernel: WebGpuKernel = async (call, gpu) => {
  const logits = input(call, 0);
  const targets = input(call, 1);
  const { ignoreIndex, reduction } = attrsOf<CrossEntropyAttrs>(call); // ignoreIndex within int32: its spec
  const nv = logits.shape[logits.rank - 1]!;
  const count = await checkedTargetCount(call, gpu, targets, nv, ignoreIndex);
  if (reduction === "none") {
    const out = gpu.alloc(targets.shape);
    await gpu.run(lossProgram(logits, targets, ignoreIndex, out));
    return out;
  }
  const losses = gpu.alloc([targets.size]);
  const out = gpu.alloc([]);
  try {
    await gpu.run(lossProgram(logits, targets, ignoreIndex, losses));
    await gpu.run(reduceProgram(losses, reduction === "mean", count, out));
  } finally {
    gpu.release(losses);
  }
  return out;
};
