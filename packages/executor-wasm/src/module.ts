/// <reference lib="dom" preserve="true" />
// (WebAssembly, BufferSource: @types/node 20 declares neither; this also reaches code that type-checks this source.)
// Loading the kernel module, the same code in Node and in browsers: the .wasm files sit in dist/wasm beside the
// compiled JS (`new URL(…, import.meta.url)`, which bundlers such as Vite understand), read with fs for file: URLs
// and fetched otherwise. The relaxed-SIMD flavour is chosen when the engine validates it, else plain SIMD.
import { UnsupportedError } from "@attngraph/tensor";

export type WasmFlavour = "simd" | "relaxed";

/** A module file: a flavour over an ordinary memory, or its threaded build over a shared one (worker pool). */
export type WasmModuleName = WasmFlavour | "simd-threads" | "relaxed-threads";

/** Where a flavour's bytes come from: the bytes themselves, or a URL (file:, http(s):, data:). */
export type WasmSource = BufferSource | URL | string;

/**
 * The shape most row-wise backward and optimizer entries share: rows [r0, r1) of two views, each read through its
 * descriptor slot (`a`, `adesc`, `b`, `bdesc`), with two more numbers `c` and `d` (an output address, a params block, a
 * scale, a flag or an accumulator, as each entry's comment says). One type for all of them, so the list below says
 * each entry's parameters once.
 */
export type ViewPairRows = (
  a: number,
  adesc: number,
  b: number,
  bdesc: number,
  c: number,
  d: number,
  r0: number,
  r1: number,
) => void;

/** The module's exports (assembly/index.ts). Pointers are byte addresses, strides and offsets float32 elements. */
export interface KernelExports {
  heapBase(): number;
  /** Most threads a threaded executor may run (every per-thread area of the module has this many copies). */
  maxThreads(): number;
  /** This instance's per-thread areas (0 on the host's instance, a worker's index on its own). */
  setThreadSlot(slot: number): void;
  copy(src: number, desc: number, dst: number): void;
  /** See assembly/matmul.ts: one call of the matmul family, its MatmulParams block at p. */
  matmul(p: number): void;
  matmulScratchBytes(n: number, k: number): number;
  /** Floats of B [k, n] packed by `packMatmulB`. */
  packedBFloats(n: number, k: number): number;
  /** B [k, n] (element [kk, j] at b + (kk·brs + j·bcs)·4) packed once into the matmul's panels at dst. */
  packMatmulB(b: number, brs: number, bcs: number, k: number, n: number, dst: number): void;
  /** `matmul` with B from `packMatmulB`: the same numbers bit for bit. */
  matmulPacked(p: number): void;
  matmulPackedScratchBytes(n: number): number;
  /** Rows below which matmulPacked runs its matrix–vector path (a threaded call then splits columns, not rows). */
  matvecRows(): number;
  /** Columns [j0, j1) of matmulPacked for fewer than matvecRows() rows (j0 a multiple of 8): one thread's share. */
  matvecPackedColumns(p: number): void;
  matmulSkipZero(p: number): void;
  allFinite(b: number, rs: number, cs: number, rows: number, cols: number): number;
  /** See assembly/mask.ts: `params` is a MaskParams block (src/kernels/mask.ts writes it), rows [r0, r1). */
  mask(params: number, r0: number, r1: number): void;
  softmax(src: number, desc: number, dst: number, scale: number, r0: number, r1: number): void;
  dropout(src: number, desc: number, dst: number, mixedSeed: number, threshold: number, keptScale: number): void;
  dropoutBits(seed: number, i: number): number;
  /** See assembly/position.ts: `src` is a Rows4Params block (src/kernels/rope.ts writes it); cos, sin: float64 tables. */
  rope(src: number, nd: number, r: number, cos: number, sin: number, dst: number): void;
  alibi(src: number, ns: number, slopes: number, scale: number, off: number, dst: number): void;
  /** See assembly/attention.ts: `params` is a PackParams block (src/kernels/attention-params.ts writes it). */
  attentionPack(params: number): number;
  /** See assembly/attention.ts: `params` is a BlockParams block; returns the key blocks still to run (0: written). */
  attentionBlock(params: number): number;
  /** See assembly/attention.ts: a whole unchunked call, its batch, head and query-block loops in the module. */
  attentionRun(pack: number, block: number, run: number): void;
  /**
   * See assembly/attention.ts: a whole call with few query rows (decoding), K and V read in place (unit stride along D
   * and Dv), no dropout; the same three params blocks as attentionRun (block.headRow: the output row of b = 0, h = 0).
   */
  attentionDecode(pack: number, block: number, run: number): void;
  /** Bytes of attentionDecode's scratch for key length S. */
  attentionDecodeScratchBytes(ns: number): number;
  /** Bytes of attentionRun's params (PackParams, BlockParams and RunParams blocks side by side). */
  attentionParamsBytes(): number;
  attentionScratchBytes(ns: number, nd: number, ndv: number): number;
  /** See assembly/expr-program.ts: bytes of a modification program's register area (status words included). */
  exprRegsBytes(registers: number): number;
  /** See assembly/expr-program.ts: clears a register area's status words. */
  exprClearStatus(regs: number): void;
  /** See assembly/expr-program.ts: an elementwise expression over n dense elements of up to four inputs. */
  exprPointwise(prog: number, regs: number, inputs: number, out: number, n: number): void;
  /** See assembly/layer-norm.ts: `affine` is an AffineParams block (src/kernels/layer-norm.ts writes it). */
  layerNorm(src: number, desc: number, dst: number, affine: number, r0: number, r1: number): void;
  gelu(src: number, dst: number, n: number, tanh: number): void;
  geluStrided(src: number, desc: number, dst: number, tanh: number, r0: number, r1: number): void;
  /** See assembly/add.ts: `params` is a PairParams block (src/kernels/add.ts writes it). */
  add(params: number): void;
  /** See assembly/mul.ts: add's blocks, multiplied. */
  mul(params: number): void;
  /** See assembly/rms-norm.ts: rows [r0, r1) of any view → dst dense; w = 0 when there is no weight. */
  rmsNorm(src: number, desc: number, dst: number, w: number, ws: number, eps: number, r0: number, r1: number): void;
  /** grad and x → dx rows; c: an AffineParams block (weight, eps), d: dst. */
  rmsNormGrad: ViewPairRows;
  /** Adds grad and x's rows into float64 accumulators; c: acc [E], d: eps. */
  rmsNormWeightGrad: ViewPairRows;
  /** See assembly/add-layer-norm.ts: a block of rows of a + b (as `add`) and their layer norm (as `layerNorm`), side by side. */
  addLayerNorm(params: number, w: number, ws: number, bias: number, bs: number, eps: number): void;
  /** See assembly/embedding.ts: `lookup` is a LookupParams block (src/kernels/embedding.ts writes it). */
  embedding(lookup: number, w: number, ws0: number, ws1: number, dst: number, k0: number, k1: number): void;
  /** Returns `acc` plus the losses of rows [r0, r1), added in order; writes each to dst unless dst is 0. */
  /** See assembly/cross-entropy.ts: `targets` is a TargetParams block (src/kernels/cross-entropy.ts writes it). */
  crossEntropy(logits: number, desc: number, targets: number, dst: number, r0: number, r1: number, acc: number): number;
  // Backward ops (assembly/sum-to.ts, transpose.ts, softmax-grad.ts, attention-grad.ts, layer-norm-grad.ts, gelu-grad.ts, embedding-grad.ts, cross-entropy-grad.ts).
  /** dst[0 .. bytes) = 0. */
  zero(dst: number, bytes: number): void;
  /** sum-to, reduced axes outer: rows [r0, r1) of the kept view (kdesc) each summed over the reduced view (rdesc), in float64. */
  sumTo(x: number, kdesc: number, rdesc: number, dst: number, r0: number, r1: number): void;
  /** sum-to, reduced axes inner: output elements [e0, e1) of the kept view each summed over the reduced view, in float64. */
  sumToInner(x: number, kdesc: number, rdesc: number, dst: number, e0: number, e1: number): void;
  /** x (any view) → dst dense with `before` zeros ahead of and `after` zeros behind every group of `rpc` rows. */
  pad(src: number, desc: number, dst: number, rpc: number, before: number, after: number): void;
  /** Rows [r0, r1) of any view → columns [r0, r1) of dst [n, ld]. */
  transposeRows(src: number, desc: number, dst: number, ld: number, r0: number, r1: number): void;
  /** y and grad → dx rows; c: dst, d: scale. */
  softmaxGrad: ViewPairRows;
  /** grad and the forward's output → rows; c: dst, d: scale. */
  maskGrad: ViewPairRows;
  /** See assembly/attention-grad.ts: `params` is a GradPackParams block (src/kernels/attention-grad-params.ts writes it). */
  attentionGradPack(params: number): number;
  /** See assembly/attention-grad.ts: `params` is a GradBlockParams block; returns the key blocks still to run (0: done). */
  attentionGradBlock(params: number): number;
  /** See assembly/attention-grad.ts: writes a kv head's dk or dv from its accumulator (a GradPackParams block). */
  attentionGradFlush(params: number): void;
  /** See assembly/attention-grad.ts: a whole unchunked call, its batch, head and query-block loops in the module. */
  attentionGradRun(pack: number, block: number, run: number): void;
  /** Bytes of attentionGradRun's params (GradPackParams, GradBlockParams and RunParams blocks side by side). */
  attentionGradParamsBytes(): number;
  /** Scratch bytes of the attention backward for key length S, head dims D and Dv, and mode (0 lse, 1 q, 2 k, 3 v). */
  attentionGradScratchBytes(ns: number, nd: number, ndv: number, mode: number): number;
  /** grad and x → dx rows; c: an AffineParams block (weight, eps), d: dst. */
  layerNormGrad: ViewPairRows;
  /** Adds grad ⊙ x̂ of the rows into float64 accumulators; c: acc [E], d: eps. */
  layerNormWeightGrad: ViewPairRows;
  f64ToF32(src: number, dst: number, n: number): void;
  geluGrad(g: number, x: number, dst: number, n: number, tanh: number): void;
  /** grad and x → rows; c: dst, d: 1 for the tanh form. */
  geluGradStrided: ViewPairRows;
  embeddingGrad(lookup: number, g: number, gdesc: number, dst: number, k0: number, k1: number): void;
  crossEntropyGrad(logits: number, desc: number, targets: number, dst: number, r0: number, r1: number): void;
  /** adam-moment over n contiguous elements of state, grad and (with hasParam) param. */
  adamMoment(s: number, g: number, p: number, dst: number, n: number, h: number): void;
  /** adam-moment over rows: state and grad any views, param dense; c: dst, d: an OptimParams block. */
  adamMomentStrided: ViewPairRows;
  /** adam-step over n contiguous elements of param, m and v; t the step (an integer >= 1). */
  adamStep(p: number, m: number, v: number, dst: number, n: number, h: number): void;
  /** adam-step over rows: param and m any views, v dense; c: dst, d: an OptimParams block. */
  adamStepStrided: ViewPairRows;
  /** Σ x² of n contiguous elements, in float64 (sum-squares). */
  sumSquares(x: number, n: number): number;
  /** dst = x · coef over n contiguous elements (clip-by-norm). */
  scaleBy(x: number, dst: number, n: number, coef: number): void;
  /** dst = (restart ? 0 : acc) + scale · g over n contiguous elements (grad-accumulate). */
  accumulateScaled(acc: number, g: number, dst: number, n: number, scale: number, restart: number): void;
  /** sgd-momentum over n contiguous elements of buf (read only without first), grad and (with hasParam) param; keep = 1 − dampening. */
  sgdMomentum(b: number, g: number, p: number, dst: number, n: number, h: number): void;
  /** sgd-momentum over rows: buf and grad any views, param dense; c: dst, d: an OptimParams block. */
  sgdMomentumStrided: ViewPairRows;
  /** sgd-step over n contiguous elements of param, grad and buf; mode 0: u = d, 1: u = buf, 2: u = d + mu · buf (Nesterov). */
  sgdStep(p: number, g: number, b: number, dst: number, n: number, h: number): void;
  /** sgd-step over rows: param and grad any views, buf dense; c: dst, d: an OptimParams block. */
  sgdStepStrided: ViewPairRows;
}

// One literal `new URL` per file: bundlers (Vite, rolldown, webpack) only rewrite URLs they can read statically.
function defaultUrl(name: WasmModuleName): URL {
  switch (name) {
    case "simd":
      return new URL("../dist/wasm/attngraph-simd.wasm", import.meta.url);
    case "relaxed":
      return new URL("../dist/wasm/attngraph-relaxed.wasm", import.meta.url);
    case "simd-threads":
      return new URL("../dist/wasm/attngraph-simd-threads.wasm", import.meta.url);
    case "relaxed-threads":
      return new URL("../dist/wasm/attngraph-relaxed-threads.wasm", import.meta.url);
  }
}

/** The bytes of one module file, from `source` or from the package's own dist/wasm. */
export async function wasmBytes(name: WasmModuleName, source: WasmSource = defaultUrl(name)): Promise<BufferSource> {
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
 * engine lacks it is an UnsupportedError; so is an engine without SIMD. `shared`: the flavour's threaded build (its
 * memory shared with the worker pool's instances).
 */
export async function loadKernelModule(
  flavour: WasmFlavour | "auto",
  sources: Partial<Record<WasmModuleName, WasmSource>> = {},
  shared = false,
): Promise<{ readonly module: WebAssembly.Module; readonly flavour: WasmFlavour }> {
  const file = (f: WasmFlavour): WasmModuleName => (shared ? `${f}-threads` : f);
  if (flavour !== "simd") {
    const relaxed = await wasmBytes(file("relaxed"), sources[file("relaxed")]);
    if (WebAssembly.validate(relaxed)) return { module: await WebAssembly.compile(relaxed), flavour: "relaxed" };
    if (flavour === "relaxed")
      throw new UnsupportedError(
        "wasm flavour relaxed: this engine rejects relaxed SIMD (Node 20 needs --experimental-wasm-relaxed-simd)",
      );
  }
  const simd = await wasmBytes(file("simd"), sources[file("simd")]);
  if (!WebAssembly.validate(simd)) {
    throw new UnsupportedError(
      `executor wasm: this engine rejects WebAssembly SIMD (fixed-width f32x4)${shared ? " with threads (shared memory, atomics)" : ""}`,
    );
  }
  return { module: await WebAssembly.compile(simd), flavour: "simd" };
}
