// The one index/stride template every WGSL program shares (tinygrad's WGSLRenderer idea: a common prelude, each op
// only its delta). Every program gets its numbers through one uniform of PARAM_WORDS u32 words, packed by `Params` on
// the host, and reads strided views with `view_at`, so one pipeline serves every rank, shape and layout: pipelines are
// compiled per program variant (cacheKey), never per shape. Special floats are tested on their bits, because WGSL lets
// a compiler assume that NaN and infinities never occur in arithmetic comparisons.
import type { GpuTensor } from "../gpu-tensor.js";

/** Threads per workgroup of the elementwise and row programs. */
export const WG = 64;
/** Words in the params uniform (array<vec4u, PARAM_WORDS / 4>): 512 bytes, enough for four rank-6 views. */
export const PARAM_WORDS = 128;
/** Dispatch limit per dimension (WebGPU's default maxComputeWorkgroupsPerDimension). */
const MAX_GROUPS = 65535;

export const PRELUDE = /* wgsl */ `
@group(0) @binding(0) var<uniform> P: array<vec4u, ${PARAM_WORDS / 4}>;
fn pu(i: u32) -> u32 { return P[i >> 2u][i & 3u]; }
fn pi(i: u32) -> i32 { return bitcast<i32>(pu(i)); }
fn pf(i: u32) -> f32 { return bitcast<f32>(pu(i)); }
// Private variables, not literals: WGSL rejects a constant expression that evaluates to an infinity or NaN.
var<private> NEG_INF_BITS: u32 = 0xff800000u;
var<private> NAN_BITS: u32 = 0x7fc00000u;
fn neg_inf() -> f32 { return bitcast<f32>(NEG_INF_BITS); }
fn nan() -> f32 { return bitcast<f32>(NAN_BITS); }
fn is_neg_inf(x: f32) -> bool { return bitcast<u32>(x) == 0xff800000u; }
// NaN or +inf: what makes a softmax row NaN.
fn is_bad(x: f32) -> bool { let b = bitcast<u32>(x); return (b & 0x7fffffffu) > 0x7f800000u || b == 0x7f800000u; }
// A view packed by Params.view at word \`at\`: rank, offset, shape[rank], strides[rank]. Returns the buffer index of
// row-major element \`i\` of the view.
fn view_at(at: u32, i: u32) -> u32 {
  let rank = pu(at);
  var rest = i;
  var idx = pu(at + 1u);
  for (var d = rank; d > 0u; d--) {
    let n = pu(at + 1u + d);
    idx += (rest % n) * pu(at + 1u + rank + d);
    rest /= n;
  }
  return idx;
}
fn view_dim(at: u32, d: u32) -> u32 { return pu(at + 2u + d); }
fn view_stride(at: u32, d: u32) -> u32 { return pu(at + 2u + pu(at) + d); }
fn view_offset(at: u32) -> u32 { return pu(at + 1u); }
// The flat invocation index of a 1-D problem dispatched as a 2-D grid (see elementwiseGrid).
fn flat_id(g: vec3u, n: vec3u) -> u32 { return g.y * n.x * ${WG}u + g.x; }
`;

/** Host side of the params uniform: words appended in order, each kernel file documents its layout. */
export class Params {
  readonly words = new Uint32Array(PARAM_WORDS);
  #n = 0;
  #ranks: number[] = [];

  /**
   * The ranks of the packed views, in order. Programs bake word positions into their code, and positions move with
   * the ranks, so the pipeline cache keys on this as well as on the program's cacheKey.
   */
  get layout(): string {
    return this.#ranks.join(".");
  }

  /** Words packed so far: what a program that packs a variable number of views checks against PARAM_WORDS first. */
  get size(): number {
    return this.#n;
  }

  u32(v: number): number {
    if (this.#n >= PARAM_WORDS) throw new Error(`webgpu: params overflow (${PARAM_WORDS} words)`);
    this.words[this.#n] = v >>> 0;
    return this.#n++;
  }

  i32(v: number): number {
    return this.u32(v | 0);
  }

  f32(v: number): number {
    const at = this.u32(0);
    new Float32Array(this.words.buffer, at * 4, 1)[0] = v;
    return at;
  }

  /** Packs a view (rank, offset, shape, strides) and returns its word position for `view_at(at, i)` in WGSL. */
  view(t: Pick<GpuTensor, "shape" | "strides" | "offset">): number {
    this.#ranks.push(t.shape.length);
    const at = this.u32(t.shape.length);
    this.u32(t.offset);
    for (const d of t.shape) this.u32(d);
    for (const s of t.strides) this.u32(s);
    return at;
  }
}

/** Workgroups for `n` invocations of WG threads, as a 2-D grid when one dimension would exceed the limit. */
export function elementwiseGrid(n: number): [number, number, number] {
  const groups = Math.ceil(n / WG);
  if (groups <= MAX_GROUPS) return [groups, 1, 1];
  return [MAX_GROUPS, Math.ceil(groups / MAX_GROUPS), 1];
}

/** Element types a binding can declare: f32 by default, i32 for int32 values (ids, targets). */
export type ElementType = "f32" | "i32" | "u32";

/**
 * Bindings 1..n read-only storage (`names`, f32 unless `types` says otherwise), then the output as read_write f32
 * storage `Y`.
 */
export function storageBindings(names: readonly string[], types: Readonly<Record<string, ElementType>> = {}): string {
  const lines = names.map(
    (n, i) => `@group(0) @binding(${i + 1}) var<storage, read> ${n}: array<${types[n] ?? "f32"}>;`,
  );
  lines.push(`@group(0) @binding(${names.length + 1}) var<storage, read_write> Y: array<f32>;`);
  return lines.join("\n");
}
