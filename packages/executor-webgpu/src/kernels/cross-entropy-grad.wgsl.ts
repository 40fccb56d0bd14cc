// cross-entropy-grad: the logits gradient of F.cross_entropy, per position p with target t (not ignoreIndex):
// (softmax(logits[p]) − onehot(t)) · g_p, g_p = grad for "sum", grad / count for "mean" (count = positions whose target
// is not ignoreIndex), grad[p] for "none"; grad absent = 1. Ignored positions get a row of exactly 0.
// One workgroup per position, the forward kernel's reductions and special values (cross-entropy.wgsl.ts): the row max
// is subtracted before exp, −∞ logits get probability 0 (skipped, not exp'd), and a NaN or +∞ logit, or a row of only
// −∞, makes the row NaN (decided on the bits). Targets are checked on the host before anything is encoded, with the
// forward's check and error (findBadIndex: in [0, V) or ignoreIndex), and the count for the mean comes from that same
// host copy. logits, targets and grad may have any strides.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { attrsOf, optionalInput, input } from "./inputs.js";
import { writeOutput } from "./output.js";
import { LOGITS_ROW_WGSL, checkedTargetCount } from "./cross-entropy.wgsl.js";
import type { CrossEntropyAttrs } from "@attngraph/graph";
import { rowProgram } from "./row-program.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";

/** How the program reads the loss gradient g_p. */
const GradMode = {
  /** Absent: 1. */
  One: 0,
  /** One value for every position (mean, sum). */
  Scalar: 1,
  /** grad[p] (none). */
  PerPosition: 2,
} as const;
type GradMode = (typeof GradMode)[keyof typeof GradMode];

/**
 * Params: logits view, targets view, grad view (rank 0 when absent), rows N, V, the logits' last stride, hasIgnore,
 * ignoreIndex, grad mode, divisor (the count for "mean", else 1). One workgroup per position (a 2-D grid past 65535).
 */
function program(
  logits: GpuTensor,
  targets: GpuTensor,
  grad: GpuTensor | undefined,
  mode: GradMode,
  divisor: number,
  ignoreIndex: number | null,
  out: GpuTensor,
): ProgramInfo {
  const nv = logits.shape[logits.rank - 1]!;
  const rows = targets.size;
  const p = new Params();
  const lv = p.view(logits);
  const tv = p.view(targets);
  const gv = p.view(grad ?? { shape: [], strides: [], offset: 0 });
  const r = p.u32(rows);
  p.u32(nv);
  p.u32(logits.strides[logits.rank - 1]!);
  p.u32(ignoreIndex === null ? 0 : 1);
  p.i32(ignoreIndex ?? 0);
  p.u32(mode);
  p.f32(divisor);
  return rowProgram({
    name: "cross-entropy-grad",
    params: p,
    count: r,
    rows,
    bindings: storageBindings(["X", "T", "G"], { T: "i32" }),
    body: /* wgsl */ `  let cls = T[view_at(${tv}u, row)];
  let skip = pu(${r + 3}u) != 0u && cls == pi(${r + 4}u);
  // An ignored position reads no logits, but still meets every barrier of the reductions (see cross-entropy.wgsl.ts).
  let nfull = pu(${r + 1}u); let xs = pu(${r + 2}u);
  let nv = select(nfull, 0u, skip);
  let base = view_at(${lv}u, row * nfull);${LOGITS_ROW_WGSL}
  let o = row * nfull;
  if (skip) {
    for (var j = t; j < nfull; j += ${WG}u) { Y[o + j] = 0.0; }
    return;
  }
  let mode = pu(${r + 5}u);
  var gp = 1.0;
  if (mode == 1u) { gp = G[view_at(${gv}u, 0u)]; } else if (mode == 2u) { gp = G[view_at(${gv}u, row)]; }
  gp = gp / pf(${r + 6}u);
  let nanRow = bad || is_neg_inf(mx);
  for (var j = t; j < nfull; j += ${WG}u) {
    let x = X[base + j * xs];
    var prob = 0.0;
    if (!is_neg_inf(x)) { prob = exp(x - mx) / s; }
    let onehot = select(0.0, 1.0, i32(j) == cls);
    Y[o + j] = select((prob - onehot) * gp, nan(), nanRow);
  }`,
    inputs: [logits, targets, grad ?? logits],
    output: out,
  });
}

/**
 * Inputs: logits [..., V] float32, targets [...] int32, optional grad ([] for "mean"/"sum", targets' shape for "none");
 * attrs { ignoreIndex, reduction } → [..., V].
 */
export const crossEntropyGradKernel: WebGpuKernel = async (call, gpu) => {
  const logits = input(call, 0);
  const targets = input(call, 1);
  const grad = optionalInput(call, 2);
  const { ignoreIndex, reduction } = attrsOf<CrossEntropyAttrs>(call);
  const nv = logits.shape[logits.rank - 1]!;
  const count = await checkedTargetCount(call, gpu, targets, nv, ignoreIndex);
  const mode = grad === undefined ? GradMode.One : reduction === "none" ? GradMode.PerPosition : GradMode.Scalar;
  // count 0 under "mean": every position is ignored, so every row is 0 and the divisor is never used.
  const divisor = reduction === "mean" && count > 0 ? count : 1;
  return writeOutput(call, gpu, (out) => program(logits, targets, grad, mode, divisor, ignoreIndex, out));
};
