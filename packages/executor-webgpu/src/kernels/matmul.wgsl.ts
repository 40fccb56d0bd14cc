// The tiled matmul every contraction runs on (projection, out-proj, score, weighted-sum):
//   C[z, m, n] = Σ_k A[b0, b1, m, k] · B[b0, b1 / group, k, n] (+ bias[n]),  z = b0 · B1 + b1,  C dense.
// A and B are read through their strides (a transposed K, a head view of a fused QKV buffer: no copies), and the
// shared key/value head of grouped-query attention is found by index (b1 / group), never repeated. Each workgroup
// stages 64×16 of A and 16×64 of B in workgroup memory and each of its 16×8 threads accumulates an 8×4 block: 128
// invocations, the most a compatibility-mode device (e.g. Dawn on OpenGL ES) guarantees.
// `skipZeroA` (weighted-sum) compiles a variant that skips a term whose A element is exactly 0: a key weighed 0 adds
// nothing, not even a NaN or ±∞ of its value row (FlashAttention semantics); the other contractions keep the plain code.
// `gelu` (linear-gelu) compiles a variant whose epilogue applies gelu (GELU_WGSL, the gelu kernel's own function) to
// each finished float32 value of C (bias added) before it is stored: the numbers of projection then gelu, in one pass.
import type { GeluAttrs } from "@attngraph/graph";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { GELU_WGSL } from "./gelu.wgsl.js";
import { PRELUDE, Params } from "./shared.wgsl.js";

const TILE = 64;

/** One strided operand: per-batch strides (outer, inner) and the two matrix strides. */
export interface Operand {
  readonly t: GpuTensor;
  readonly offset: number;
  readonly batch: readonly [outer: number, inner: number];
  readonly row: number;
  readonly col: number;
}

export interface MatmulShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Outer and inner batch counts (B and H); B's inner batch index is b1 / group. */
  readonly batches: readonly [outer: number, inner: number];
  readonly group: number;
}

/** Program variants; at most one of them per program (weighted-sum skips zeros, linear-gelu activates). */
export interface MatmulVariant {
  /** Skip a term whose A element is exactly 0. */
  readonly skipZeroA?: boolean;
  /** Apply gelu of this form to every element of C (after the bias). */
  readonly gelu?: GeluAttrs["approximate"];
}

/**
 * Params: M, N, K, B1, group, A (offset, s0, s1, row, col), B (offset, s0, s1, row, col), hasBias, bias offset, bias
 * stride, and for the gelu variant one more word: tanh (1) or exact (0).
 */
export function matmulProgram(
  name: string,
  dims: MatmulShape,
  a: Operand,
  b: Operand,
  bias: GpuTensor | undefined,
  out: GpuTensor,
  variant: MatmulVariant = {},
): ProgramInfo {
  const { skipZeroA = false, gelu } = variant;
  if (skipZeroA && gelu !== undefined) throw new Error("webgpu: matmul variants skipZeroA and gelu do not combine");
  const p = new Params();
  for (const v of [dims.m, dims.n, dims.k, dims.batches[1], dims.group]) p.u32(v);
  for (const o of [a, b]) for (const v of [o.offset, o.batch[0], o.batch[1], o.row, o.col]) p.u32(v);
  p.u32(bias ? 1 : 0);
  p.u32(bias?.offset ?? 0);
  p.u32(bias?.strides[0] ?? 0);
  const form = gelu === undefined ? 0 : p.u32(gelu === "tanh" ? 1 : 0);
  return {
    name,
    cacheKey: skipZeroA ? "matmul-skip-zero-a" : gelu !== undefined ? "matmul-gelu" : "matmul",
    code: () => /* wgsl */ `${PRELUDE}${gelu !== undefined ? GELU_WGSL : ""}
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;
const TM = 64u;
const TN = 64u;
const TK = 16u;
var<workgroup> As: array<f32, 1024>; // [TM][TK]
var<workgroup> Bs: array<f32, 1024>; // [TK][TN]

@compute @workgroup_size(16, 8, 1)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let M = pu(0u); let N = pu(1u); let K = pu(2u); let B1 = pu(3u); let group = pu(4u);
  let b0 = wg.z / B1; let b1 = wg.z % B1;
  let aBase = pu(5u) + b0 * pu(6u) + b1 * pu(7u);
  let aRow = pu(8u); let aCol = pu(9u);
  let bBase = pu(10u) + b0 * pu(11u) + (b1 / group) * pu(12u);
  let bRow = pu(13u); let bCol = pu(14u);
  let m0 = wg.y * TM; let n0 = wg.x * TN;
  let tid = lid.y * 16u + lid.x;
  var acc: array<f32, 32>;
  for (var k0 = 0u; k0 < K; k0 += TK) {
    for (var e = tid; e < TM * TK; e += 128u) {
      let m = m0 + e / TK; let k = k0 + e % TK;
      var v = 0.0;
      if (m < M && k < K) { v = A[aBase + m * aRow + k * aCol]; }
      As[e] = v;
    }
    for (var e = tid; e < TK * TN; e += 128u) {
      let k = k0 + e / TN; let n = n0 + e % TN;
      var v = 0.0;
      if (k < K && n < N) { v = B[bBase + k * bRow + n * bCol]; }
      Bs[e] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      var bv: array<f32, 4>;
      for (var j = 0u; j < 4u; j++) { bv[j] = Bs[kk * TN + lid.x * 4u + j]; }
      for (var i = 0u; i < 8u; i++) {
        let av = As[(lid.y * 8u + i) * TK + kk];${skipZeroA ? " if (av == 0.0) { continue; }" : ""}
        for (var j = 0u; j < 4u; j++) { acc[i * 4u + j] = fma(av, bv[j], acc[i * 4u + j]); }
      }
    }
    workgroupBarrier();
  }
  let hasBias = pu(15u) != 0u;${gelu !== undefined ? ` let tanhForm = pu(${form}u) != 0u;` : ""}
  for (var i = 0u; i < 8u; i++) {
    let m = m0 + lid.y * 8u + i;
    if (m >= M) { continue; }
    for (var j = 0u; j < 4u; j++) {
      let n = n0 + lid.x * 4u + j;
      if (n >= N) { continue; }
      var v = acc[i * 4u + j];
      if (hasBias) { v += BIAS[pu(16u) + n * pu(17u)]; }${gelu !== undefined ? "\n      v = gelu(v, tanhForm);" : ""}
      Y[(wg.z * M + m) * N + n] = v;
    }
  }
}`,
    params: p,
    inputs: [a.t, b.t, bias ?? b.t],
    output: out,
    workgroups: [Math.ceil(dims.n / TILE), Math.ceil(dims.m / TILE), dims.batches[0] * dims.batches[1]],
  };
}
