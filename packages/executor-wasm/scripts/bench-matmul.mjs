// The wasm matmul alone, beside its ceiling: GFLOP/s of `matmul` (B packed on every call, as for an activation),
// `matmulPacked` (B packed once, as for an uploaded weight) and the "in-L1" ceiling (the same tile on a problem small
// enough that A, B and C never leave L1: what the 5×8 tile does when memory costs nothing). Shapes: the projections
// of the transformer block at d=768 (qkv, out_proj, MLP up and down) at T=128 and T=512. Then the matrix–vector path
// (one to three rows against a packed 768 × 768 weight: a decoding step's projections), bound by streaming the weight,
// beside its own ceiling: a plain v128 read of the same bytes (a tiny module compiled here with asc, not shipped).
// Run after a build: `pnpm --filter @attngraph/executor-wasm bench:matmul [--flavour simd|relaxed] [--json FILE]`.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import asc from "assemblyscript/asc";

const { values } = parseArgs({
  options: {
    flavour: { type: "string", default: "simd" },
    json: { type: "string" },
    reps: { type: "string", default: "7" },
  },
});
if (values.flavour !== "simd" && values.flavour !== "relaxed")
  throw new Error(`--flavour ${values.flavour}: expected simd or relaxed`);
const bytes = readFileSync(new URL(`../dist/wasm/attngraph-${values.flavour}.wasm`, import.meta.url));
if (!WebAssembly.validate(bytes))
  throw new Error(
    `this engine rejects the ${values.flavour} flavour (Node 20 needs --experimental-wasm-relaxed-simd for relaxed)`,
  );
const memory = new WebAssembly.Memory({ initial: 2500 });
const e = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } }).exports;
const reps = Number(values.reps);

/** A plain read of `bytes` at `p` (four v128 loads summed per 64 bytes), in its own module over the same memory. */
const STREAM_SOURCE = `export function streamRead(p: usize, bytes: usize): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const end = p + bytes;
  while (p < end) {
    a0 = f32x4.add(a0, v128.load(p)); a1 = f32x4.add(a1, v128.load(p, 16));
    a2 = f32x4.add(a2, v128.load(p, 32)); a3 = f32x4.add(a3, v128.load(p, 48));
    p += 64;
  }
  return f32x4.extract_lane(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), 0);
}`;
const streamWasm = await asc.compileString(STREAM_SOURCE, {
  optimizeLevel: 3,
  runtime: "stub",
  importMemory: true,
  enable: ["simd"],
  noAssert: true,
});
if (streamWasm.error)
  throw new Error(`compiling the streaming ceiling failed: ${streamWasm.error.message}\n${streamWasm.stderr}`);
const { streamRead } = new WebAssembly.Instance(new WebAssembly.Module(streamWasm.binary), {
  env: { memory, abort() {} },
}).exports;

/**
 * The module's matmuls take their numbers in a params block (MatmulParams, src/kernels/matmul-params.ts: the fields in
 * order, 4 bytes each); one block below the heap, written before each call, its address the call's one argument.
 */
const MATMUL_FIELDS = [
  "m",
  "n",
  "k",
  "a",
  "lda",
  "b",
  "brs",
  "bcs",
  "c",
  "ldc",
  "bias",
  "biasStride",
  "scratch",
  "j0",
  "j1",
];
let paramsAt = 0;
function params(call) {
  const i32 = new Int32Array(memory.buffer);
  MATMUL_FIELDS.forEach((f, i) => (i32[paramsAt / 4 + i] = call[f] ?? 0));
  return paramsAt;
}
const matmul = (m, n, k, a, lda, b, brs, bcs, c, ldc, scratch) =>
  e.matmul(params({ m, n, k, a, lda, b, brs, bcs, c, ldc, scratch }));
const matmulPacked = (m, n, k, a, lda, b, c, ldc, scratch) =>
  e.matmulPacked(params({ m, n, k, a, lda, b, c, ldc, scratch }));

/** Lays out A [m, k], W [n, k] (nn.Linear layout; B = Wᵀ), C, packed B and scratch from the heap base; fills A and W. */
function layout(m, n, k) {
  const align = (x) => Math.ceil(x / 64) * 64;
  paramsAt = align(e.heapBase());
  const a = align(paramsAt + 64);
  const w = align(a + m * k * 4);
  const c = align(w + n * k * 4);
  const packed = align(c + m * n * 4);
  const scratch = align(packed + e.packedBFloats(n, k) * 4);
  if (scratch + e.matmulScratchBytes(n, k) > memory.buffer.byteLength) throw new Error(`${m}x${n}x${k} does not fit`);
  const f = new Float32Array(memory.buffer);
  for (let i = a / 4; i < c / 4; i++) f[i] = ((i % 97) - 48) / 64;
  return { a, w, c, packed, scratch };
}

/** Best of `reps` timings of `fn` (after one warm-up call), in ms. */
function best(fn, inner = 1) {
  fn();
  let t = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    for (let i = 0; i < inner; i++) fn();
    t = Math.min(t, (performance.now() - t0) / inner);
  }
  return t;
}

const gflops = (m, n, k, ms) => (2 * m * n * k) / ms / 1e6;
const rows = [];
for (const t of [128, 512]) {
  for (const [name, n, k] of [
    ["qkv_proj", 2304, 768],
    ["out_proj", 768, 768],
    ["mlp.0", 3072, 768],
    ["mlp.2", 768, 3072],
  ]) {
    const m = t;
    const p = layout(m, n, k);
    // B = Wᵀ: element [kk, j] at W + (j·k + kk)·4, row stride 1 and column stride k (what the projection passes).
    const perCall = best(() => matmul(m, n, k, p.a, k, p.w, 1, k, p.c, n, p.scratch));
    e.packMatmulB(p.w, 1, k, k, n, p.packed);
    const packed = best(() => matmulPacked(m, n, k, p.a, k, p.packed, p.c, n, p.scratch));
    rows.push({
      shape: `${name} T=${t}`,
      m,
      n,
      k,
      perCallMs: perCall,
      packedMs: packed,
      perCallGflops: gflops(m, n, k, perCall),
      packedGflops: gflops(m, n, k, packed),
    });
  }
}
// Ceiling: 10 rows × 32 columns × 256 deep (A 10 KiB, packed B 32 KiB, C 1.3 KiB: all in a 48 KiB L1), many times.
const [cm, cn, ck] = [10, 32, 256];
const cp = layout(cm, cn, ck);
e.packMatmulB(cp.w, 1, ck, ck, cn, cp.packed);
const ceilingMs = best(() => matmulPacked(cm, cn, ck, cp.a, ck, cp.packed, cp.c, cn, cp.scratch), 2000);
const ceiling = gflops(cm, cn, ck, ceilingMs);

// The matrix–vector path: packed 768 × 768 weights in turn, 1, 2 and 3 rows; GB/s counts each row's pass over its
// weight. Two working sets: four weights (9 MiB: a decoding step's projections, in L3 between calls) and 32 (72 MiB:
// more than L3, so every pass reads from DRAM, as a model's layers do once they outgrow the cache), each beside a plain
// read of the same bytes.
const [vn, vk] = [768, 768];
const vp = layout(3, vn, vk);
const weights = [];
let next = Math.ceil((vp.scratch + e.matmulScratchBytes(vn, vk)) / 64) * 64;
const wBytes = Math.ceil((e.packedBFloats(vn, vk) * 4) / 64) * 64;
const dramWeights = 32;
if (next + dramWeights * wBytes > memory.buffer.byteLength)
  memory.grow(Math.ceil((next + dramWeights * wBytes - memory.buffer.byteLength) / 65536));
for (let w = 0; w < dramWeights; w++) {
  weights.push(next);
  e.packMatmulB(vp.w, 1, vk, vk, vn, next);
  next += wBytes;
}
const setRows = (set, label) => {
  const streamMs =
    best(
      () => {
        for (const w of set) streamRead(w, vn * vk * 4);
      },
      Math.ceil(100 / set.length),
    ) / set.length;
  const streamGbps = (vn * vk * 4) / streamMs / 1e6;
  const rows = [1, 2, 3].map((m) => {
    const ms =
      best(
        () => {
          for (const w of set) matmulPacked(m, vn, vk, vp.a, vk, w, vp.c, vn, vp.scratch);
        },
        Math.ceil(100 / set.length),
      ) / set.length;
    return {
      shape: `matvec m=${m}`,
      m,
      n: vn,
      k: vk,
      ms,
      gflops: gflops(m, vn, vk, ms),
      gbps: (m * vn * vk * 4) / ms / 1e6,
    };
  });
  return { label, weights: set.length, streamGbps, rows };
};
const mvSets = [
  setRows(weights.slice(0, 4), "4 weights in turn (9 MiB, in L3)"),
  setRows(
    weights,
    `${dramWeights} weights in turn (${Math.round((dramWeights * vn * vk * 4) / 2 ** 20)} MiB, from DRAM)`,
  ),
];

const fmt = (x) => x.toFixed(x < 10 ? 2 : 1);
const lines = [
  `wasm matmul (${values.flavour} flavour), ${cpus()[0]?.model.trim()}, Node ${process.version}, best of ${reps}`,
  `in-L1 ceiling of the 5×8 tile (${cm}×${cn}×${ck}, repeated): ${fmt(ceiling)} GFLOP/s`,
  "",
  "shape            m     n     k   per call ms  GFLOP/s   packed ms  GFLOP/s  % of ceiling",
  ...rows.map(
    (r) =>
      `${r.shape.padEnd(14)} ${String(r.m).padStart(4)} ${String(r.n).padStart(5)} ${String(r.k).padStart(5)}  ${fmt(r.perCallMs).padStart(11)}  ${fmt(r.perCallGflops).padStart(7)}  ${fmt(r.packedMs).padStart(10)}  ${fmt(r.packedGflops).padStart(7)}  ${((100 * r.packedGflops) / ceiling).toFixed(0).padStart(12)}`,
  ),
  ...mvSets.flatMap((set) => [
    "",
    `${set.label}: streaming ceiling (a plain v128 read of each 2.25 MiB weight) ${fmt(set.streamGbps)} GB/s`,
    "shape            m     n     k   ms per call  GFLOP/s  weight GB/s  % of ceiling",
    ...set.rows.map(
      (r) =>
        `${r.shape.padEnd(14)} ${String(r.m).padStart(4)} ${String(r.n).padStart(5)} ${String(r.k).padStart(5)}  ${r.ms.toFixed(4).padStart(11)}  ${fmt(r.gflops).padStart(7)}  ${fmt(r.gbps).padStart(11)}  ${((100 * r.gbps) / set.streamGbps).toFixed(0).padStart(12)}`,
    ),
  ]),
];
console.log(lines.join("\n"));
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      {
        flavour: values.flavour,
        node: process.version,
        cpu: cpus()[0]?.model.trim(),
        ceilingGflops: ceiling,
        rows,
        matvec: mvSets,
      },
      null,
      2,
    ),
  );
