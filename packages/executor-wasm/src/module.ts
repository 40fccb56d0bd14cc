/// <reference lib="dom" preserve="true" />
// (WebAssembly, BufferSource: @types/node 20 declares neither; this also reaches code that type-checks this source.)
// Loading the kernel module, the same code in Node and in browsers: the .wasm files sit in dist/wasm beside the
// compiled JS (`new URL(…, import.meta.url)`, which bundlers such as Vite understand), read with fs for file: URLs
// and fetched otherwise. The relaxed-SIMD flavour is chosen when the engine validates it, else plain SIMD.
import { UnsupportedError } from "@attngraph/tensor";

export type WasmFlavour = "simd" | "relaxed";

/** Where a flavour's bytes come from: the bytes themselves, or a URL (file:, http(s):, data:). */
export type WasmSource = BufferSource | URL | string;

/** The module's exports (assembly/index.ts). Pointers are byte addresses, strides and offsets float32 elements. */
export interface KernelExports {
  heapBase(): number;
  copy(src: number, desc: number, dst: number): void;
  matmul(m: number, n: number, k: number, a: number, lda: number, b: number, brs: number, bcs: number, c: number, ldc: number, bias: number, biasStride: number, scratch: number): void;
  matmulScratchBytes(n: number, k: number): number;
  /** Floats of B [k, n] packed by `packMatmulB`. */
  packedBFloats(n: number, k: number): number;
  /** B [k, n] (element [kk, j] at b + (kk·brs + j·bcs)·4) packed once into the matmul's panels at dst. */
  packMatmulB(b: number, brs: number, bcs: number, k: number, n: number, dst: number): void;
  /** `matmul` with B from `packMatmulB`: the same numbers bit for bit. */
  matmulPacked(m: number, n: number, k: number, a: number, lda: number, packed: number, c: number, ldc: number, bias: number, biasStride: number, scratch: number): void;
  matmulPackedScratchBytes(n: number): number;
  matmulSkipZero(m: number, n: number, k: number, a: number, lda: number, b: number, brs: number, bcs: number, c: number, ldc: number): void;
  allFinite(b: number, rs: number, cs: number, rows: number, cols: number): number;
  /** See assembly/mask.ts: scores and strides, pad, user mask, bias (each address 0 when absent, strides over [B, H, L, S]), scale, geometry, dst, rows. */
  mask(
    src: number, s0: number, s1: number, s2: number, s3: number,
    pad: number, ps0: number, ps1: number,
    user: number, u0: number, u1: number, u2: number, u3: number,
    bias: number, b0: number, b1: number, b2: number, b3: number, scale: number,
    nb: number, nh: number, nl: number, ns: number, causal: number, off: number, win: number, dst: number, r0: number, r1: number,
  ): void;
  softmax(src: number, desc: number, dst: number, scale: number, r0: number, r1: number): void;
  dropout(src: number, desc: number, dst: number, mixedSeed: number, threshold: number, keptScale: number): void;
  dropoutBits(seed: number, i: number): number;
  rope(src: number, s0: number, s1: number, s2: number, s3: number, nb: number, nh: number, nl: number, nd: number, r: number, cos: number, sin: number, dst: number): void;
  alibi(src: number, s0: number, s1: number, s2: number, s3: number, nb: number, nh: number, nl: number, ns: number, slopes: number, scale: number, off: number, dst: number): void;
  /** See assembly/attention.ts: `params` is a PackParams block (src/kernels/attention-params.ts writes it). */
  attentionPack(params: number): number;
  /** See assembly/attention.ts: `params` is a BlockParams block; returns the key blocks still to run (0: written). */
  attentionBlock(params: number): number;
  /** Bytes of one attention params block. */
  attentionParamsBytes(): number;
  /** Writes every params field's byte offset (PackParams' then BlockParams', i32 each) at dst; returns their count. */
  attentionParamsLayout(dst: number): number;
  attentionScratchBytes(ns: number, nd: number, ndv: number): number;
  layerNorm(src: number, desc: number, dst: number, w: number, ws: number, b: number, bs: number, eps: number, r0: number, r1: number): void;
  gelu(src: number, dst: number, n: number, tanh: number): void;
  geluStrided(src: number, desc: number, dst: number, tanh: number, r0: number, r1: number): void;
  add(a: number, ars: number, acs: number, b: number, brs: number, bcs: number, dst: number, rows: number, n: number): void;
  /** See assembly/add-layer-norm.ts: a block of rows of a + b (as `add`) and their layer norm (as `layerNorm`), side by side. */
  addLayerNorm(a: number, ars: number, acs: number, b: number, brs: number, bcs: number, dst: number, rows: number, n: number, w: number, ws: number, bias: number, bs: number, eps: number): void;
  embedding(ids: number, desc: number, nv: number, w: number, ws0: number, ws1: number, dst: number, ne: number, k0: number, k1: number): void;
  /** Returns `acc` plus the losses of rows [r0, r1), added in order; writes each to dst unless dst is 0. */
  crossEntropy(logits: number, desc: number, targets: number, tdesc: number, dst: number, ignore: number, hasIgnore: number, r0: number, r1: number, acc: number): number;
}

// One literal `new URL` per flavour: bundlers (Vite, rolldown, webpack) only rewrite URLs they can read statically.
const defaultUrl = (flavour: WasmFlavour): URL =>
  flavour === "relaxed" ? new URL("../dist/wasm/attngraph-relaxed.wasm", import.meta.url) : new URL("../dist/wasm/attngraph-simd.wasm", import.meta.url);

/** The bytes of one flavour, from `source` or from the package's own dist/wasm. */
export async function wasmBytes(flavour: WasmFlavour, source: WasmSource = defaultUrl(flavour)): Promise<BufferSource> {
  if (typeof source !== "string" && !(source instanceof URL)) return source;
  const url = typeof source === "string" ? new URL(source, import.meta.url) : source;
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return new Uint8Array(await readFile(url));
  }
  const res = await fetch(url);
  if (!res.ok) throw new UnsupportedError(`wasm module ${url.href} (fetch answered ${res.status})`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * Compiles the module of `flavour`; "auto" is relaxed SIMD when `WebAssembly.validate` accepts its bytes (browsers
 * since 2023; Node 20 only with --experimental-wasm-relaxed-simd), else plain SIMD. Asking for "relaxed" where the
 * engine lacks it is an UnsupportedError; so is an engine without SIMD.
 */
export async function loadKernelModule(
  flavour: WasmFlavour | "auto",
  sources: Partial<Record<WasmFlavour, WasmSource>> = {},
): Promise<{ readonly module: WebAssembly.Module; readonly flavour: WasmFlavour }> {
  if (flavour !== "simd") {
    const relaxed = await wasmBytes("relaxed", sources.relaxed);
    if (WebAssembly.validate(relaxed)) return { module: await WebAssembly.compile(relaxed), flavour: "relaxed" };
    if (flavour === "relaxed") throw new UnsupportedError("wasm flavour relaxed: this engine rejects relaxed SIMD (Node 20 needs --experimental-wasm-relaxed-simd)");
  }
  const simd = await wasmBytes("simd", sources.simd);
  if (!WebAssembly.validate(simd)) throw new UnsupportedError("executor wasm: this engine rejects WebAssembly SIMD (fixed-width f32x4)");
  return { module: await WebAssembly.compile(simd), flavour: "simd" };
}
