// The backward programs of the row norms (layer-norm and rms-norm), written once for both: they differ only in the
// row statistics the forward computes (x₀, mean and rstd, or rstd alone), in x̂, and in whether the mean of ĝ is
// subtracted, which a NormStatistics says. The statistics are recomputed from x by the forward kernel's own WGSL, so
// x̂ is the forward's.
// - to x: one workgroup per row; with ĝ = grad ⊙ weight (weight absent = 1), dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂))
//   (no mean(ĝ) term for rms-norm), the means by workgroup reductions.
// - to the weight: Σ over rows of grad ⊙ x̂. A first program writes each row's statistics to a scratch [rows, k]; a
//   second gives each column e one workgroup, which splits the rows over its threads and adds the partial sums as a
//   tree (a column sum over thousands of rows stays accurate in float32).
// grad and x may have any strides; the weight is an [E] view read through its stride.
import type { GpuTensor } from "../gpu-tensor.js";
import type { KernelContext, WebGpuKernel } from "../kernel-context.js";
import { attrsOf, input } from "./inputs.js";
import { programKernel } from "./output.js";
import type { ProgramInfo } from "../program.js";
import { optionalVectorWgsl, packOptionalVector, packRow, rowEpsWgsl, rowWgsl } from "./norm-params.wgsl.js";
import { rowProgram } from "./row-program.wgsl.js";
import { Params, WG, storageBindings } from "./shared.wgsl.js";

/** What a row norm's backward needs to know of its forward. */
export interface NormStatistics {
  /** The forward op ("layer-norm", "rms-norm"); the programs are named after it. */
  readonly op: string;
  /**
   * WGSL statements giving the row's statistics (`names`) in a workgroup (thread `t`, REDUCE_WGSL bound), the forward
   * kernel's own: `x(j)` is the row's element j, `ne` the row length, `eps` an f32 expression.
   */
  readonly rowStats: (x: (j: string) => string, ne: string, eps: string) => string;
  /** The statistics the weight gradient keeps per row, in order. */
  readonly names: readonly string[];
  /** WGSL: x̂ of the element `x` from the statistics in scope, parenthesized whole. */
  readonly xhat: (x: string) => string;
  /** Whether the forward subtracts the row's mean, so that dx subtracts mean(ĝ) too. */
  readonly centered: boolean;
}

/** Params: grad view, packRow's (x view, rows, E, x's last stride, eps), grad's last stride, weight (present, offset, stride). */
export function normGradProgram(
  s: NormStatistics,
  grad: GpuTensor,
  x: GpuTensor,
  w: GpuTensor | undefined,
  eps: number,
  out: GpuTensor,
): ProgramInfo {
  const p = new Params();
  const gv = p.view(grad);
  const x0 = packRow(p, x, eps);
  const gs = p.u32(grad.strides[grad.rank - 1]!);
  const wa = packOptionalVector(p, w);
  const c = s.centered;
  // x̂ and ĝ of element j, the same statements in both passes.
  const elementWgsl = `let xh = ${s.xhat("X[xb + j * xs]")};
    var gh = G[gb + j * gs];
    if (hasW) { gh = gh * W[wo + j * ws]; }`;
  return rowProgram({
    name: `${s.op}-grad`,
    params: p,
    count: x0.at,
    rows: x0.rows,
    bindings: storageBindings(["G", "X", "W"]),
    body: /* wgsl */ `  ${rowWgsl(x0)} let gs = pu(${gs}u);
  ${optionalVectorWgsl("w", wa)}
  let gb = view_at(${gv}u, row * ne);${s.rowStats((j) => `X[xb + ${j} * xs]`, "ne", rowEpsWgsl(x0))}
  ${c ? "var sg = 0.0;\n  " : ""}var sgx = 0.0;
  for (var j = t; j < ne; j += ${WG}u) {
    ${elementWgsl}
    ${c ? "sg += gh;\n    " : ""}sgx += gh * xh;
  }
  ${c ? "let mg = reduce_sum(t, sg) / f32(ne);\n  " : ""}let mgx = reduce_sum(t, sgx) / f32(ne);
  let o = row * ne;
  for (var j = t; j < ne; j += ${WG}u) {
    ${elementWgsl}
    Y[o + j] = rstd * (${c ? "(gh - mg)" : "gh"} - xh * mgx);
  }`,
    inputs: [grad, x, w ?? x],
    output: out,
  });
}

/** WGSL: the index of statistic `k` of row `row` in the scratch [rows, k]. */
function statAt(s: NormStatistics, k: number, row: string): string {
  const base = s.names.length === 1 ? row : `${s.names.length}u * ${row}`;
  return k === 0 ? base : `${base} + ${k}u`;
}

/** Params: packRow's (x view, rows, E, x's last stride, eps). One workgroup per row; writes the row's statistics. */
function statsProgram(s: NormStatistics, x: GpuTensor, eps: number, out: GpuTensor): ProgramInfo {
  const p = new Params();
  const x0 = packRow(p, x, eps);
  const store = s.names.map((name, k) => `Y[${statAt(s, k, "row")}] = ${name};`).join(" ");
  return rowProgram({
    name: `${s.op}-stats`,
    params: p,
    count: x0.at,
    rows: x0.rows,
    bindings: storageBindings(["X"]),
    body: /* wgsl */ `  ${rowWgsl(x0)}${s.rowStats((j) => `X[xb + ${j} * xs]`, "ne", rowEpsWgsl(x0))}
  if (t == 0u) { ${store} }`,
    inputs: [x],
    output: out,
  });
}

/** Params: grad view, x view, rows, E. One workgroup per column e: Σ_r grad[r, e] · x̂[r, e] from the row stats ST. */
function weightGradProgram(
  s: NormStatistics,
  grad: GpuTensor,
  x: GpuTensor,
  stats: GpuTensor,
  out: GpuTensor,
): ProgramInfo {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const p = new Params();
  const gv = p.view(grad);
  const xv = p.view(x);
  const r = p.u32(rows);
  p.u32(ne);
  const load = s.names.map((name, k) => `let ${name} = ST[${statAt(s, k, "row")}];`).join(" ");
  return rowProgram({
    name: `${s.op}-weight-grad`,
    params: p,
    count: r + 1,
    rows: ne,
    bindings: storageBindings(["G", "X", "ST"]),
    index: "e",
    body: /* wgsl */ `  let ne = pu(${r + 1}u);
  var s = 0.0;
  for (var row = t; row < pu(${r}u); row += ${WG}u) {
    let i = row * ne + e;
    ${load}
    s += G[view_at(${gv}u, i)] * ${s.xhat(`X[view_at(${xv}u, i)]`)};
  }
  s = reduce_sum(t, s);
  if (t == 0u) { Y[e] = s; }`,
    inputs: [grad, x, stats],
    output: out,
  });
}

/** The weight gradient [E] of a checked call: the statistics into a scratch, then one workgroup per column. */
export async function normWeightGrad(
  s: NormStatistics,
  gpu: KernelContext,
  grad: GpuTensor,
  x: GpuTensor,
  eps: number,
): Promise<GpuTensor> {
  const ne = x.shape[x.rank - 1]!;
  const out = gpu.alloc([ne]);
  if (ne === 0) return out;
  const rows = x.size / ne;
  const stats = gpu.alloc([rows, s.names.length]);
  try {
    if (rows > 0) await gpu.run(statsProgram(s, x, eps, stats));
    await gpu.run(weightGradProgram(s, grad, x, stats, out));
  } finally {
    gpu.release(stats);
  }
  return out;
}

/** The two backward kernels of the norm `s` (both take attrs { eps }). */
export function normBackwardKernels(s: NormStatistics): { grad: WebGpuKernel; weightGrad: WebGpuKernel } {
  return {
    /** Inputs: grad [..., E], x [..., E], optional weight [E] → [..., E]. */
    grad: programKernel<{ eps: number }, [GpuTensor, GpuTensor, GpuTensor?]>(([grad, x, w], { eps }, out) =>
      normGradProgram(s, grad, x, w, eps, out),
    ),
    /** Inputs: grad [..., E], x [..., E] → [E]. */
    weightGrad: async (call, gpu) => {
      const { eps } = attrsOf<{ eps: number }>(call);
      return normWeightGrad(s, gpu, input(call, 0), input(call, 1), eps);
    },
  };
}
