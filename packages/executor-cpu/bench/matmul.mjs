// Micro benchmark of the CPU executor's matmul core and fused attention kernel (single thread, float32 in and out).
// Run after a build:  npx tsc -b packages/executor-cpu && node packages/executor-cpu/bench/matmul.mjs
// Prints GFLOP/s (2·M·N·K / time) for the matmul core, the same tile with Math.fround accumulators, and a naive loop;
// then ms for one fused attention call against the unfused chain, and for the fused backward (attention-lse and
// attention-grad for q, k and v) against the unfused chain's backward rules. Times are the median of several runs after warm-up;
// on a shared machine, compare numbers from the same run only.
import { Tensor } from "@attngraph/tensor";
import { createCpuExecutor, matmul } from "../dist/index.js";
import { packPanels } from "../dist/kernels/matmul.js";

function median(f, reps) {
  f();
  f();
  const ts = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    f();
    ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  return ts[ts.length >> 1];
}

function random(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** The plain dot-product loop with a float64 accumulator, reading A and B through their strides. */
function naive(m, n, k, a, b, c) {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (
        let p = 0, ap = a.offset + i * a.rowStride, bp = b.offset + j * b.colStride;
        p < k;
        p++, ap += a.colStride, bp += b.rowStride
      ) {
        acc += a.data[ap] * b.data[bp];
      }
      c[i * n + j] = acc;
    }
  }
}

/** The core's 4×4 tile with Math.fround after every multiply and add (float32 accumulation), for the comparison. */
function froundTile(kc, ap, a, bp, b, c, co, ldc) {
  const f = Math.fround;
  let c00 = 0,
    c01 = 0,
    c02 = 0,
    c03 = 0,
    c10 = 0,
    c11 = 0,
    c12 = 0,
    c13 = 0;
  let c20 = 0,
    c21 = 0,
    c22 = 0,
    c23 = 0,
    c30 = 0,
    c31 = 0,
    c32 = 0,
    c33 = 0;
  for (let p = 0; p < kc; p++, a += 4, b += 4) {
    const a0 = ap[a],
      a1 = ap[a + 1],
      a2 = ap[a + 2],
      a3 = ap[a + 3];
    const b0 = bp[b];
    c00 = f(c00 + f(a0 * b0));
    c10 = f(c10 + f(a1 * b0));
    c20 = f(c20 + f(a2 * b0));
    c30 = f(c30 + f(a3 * b0));
    const b1 = bp[b + 1];
    c01 = f(c01 + f(a0 * b1));
    c11 = f(c11 + f(a1 * b1));
    c21 = f(c21 + f(a2 * b1));
    c31 = f(c31 + f(a3 * b1));
    const b2 = bp[b + 2];
    c02 = f(c02 + f(a0 * b2));
    c12 = f(c12 + f(a1 * b2));
    c22 = f(c22 + f(a2 * b2));
    c32 = f(c32 + f(a3 * b2));
    const b3 = bp[b + 3];
    c03 = f(c03 + f(a0 * b3));
    c13 = f(c13 + f(a1 * b3));
    c23 = f(c23 + f(a2 * b3));
    c33 = f(c33 + f(a3 * b3));
  }
  c[co] = c00;
  c[co + 1] = c01;
  c[co + 2] = c02;
  c[co + 3] = c03;
  co += ldc;
  c[co] = c10;
  c[co + 1] = c11;
  c[co + 2] = c12;
  c[co + 3] = c13;
  co += ldc;
  c[co] = c20;
  c[co + 1] = c21;
  c[co + 2] = c22;
  c[co + 3] = c23;
  co += ldc;
  c[co] = c30;
  c[co + 1] = c31;
  c[co + 2] = c32;
  c[co + 3] = c33;
}

/** Packs both operands whole (sizes here are multiples of 4) and runs the fround tile over them. */
function froundMatmul(m, n, k, a, b, c, ap, bp) {
  packPanels(a.data, a.offset, a.rowStride, a.colStride, m, k, ap, 0);
  packPanels(b.data, b.offset, b.colStride, b.rowStride, n, k, bp, 0);
  for (let j = 0; j < n; j += 4) for (let i = 0; i < m; i += 4) froundTile(k, ap, i * k, bp, j * k, c, i * n + j, n);
}

function benchMatmul(label, m, n, k, transposedB) {
  const a = { data: random(m * k, 1), offset: 0, rowStride: k, colStride: 1 };
  // transposedB: B = Wᵀ with W [N, K] row-major (the projection layout x · Wᵀ); else B [K, N] row-major.
  const b = transposedB
    ? { data: random(n * k, 2), offset: 0, rowStride: 1, colStride: k }
    : { data: random(k * n, 2), offset: 0, rowStride: n, colStride: 1 };
  const c = new Float32Array(m * n);
  const flops = 2 * m * n * k;
  const gf = (ms) => (flops / (ms * 1e6)).toFixed(2);
  const reps = Math.max(3, Math.min(15, Math.round(2e9 / flops)));
  const tCore = median(() => matmul(m, n, k, a, b, c, 0, n), reps);
  const ap = new Float64Array(m * k);
  const bp = new Float64Array(n * k);
  const tFround = median(() => froundMatmul(m, n, k, a, b, c, ap, bp), reps);
  const tNaive = median(() => naive(m, n, k, a, b, c), reps);
  console.log(
    `matmul ${label.padEnd(22)} core ${gf(tCore)} GFLOP/s (${tCore.toFixed(1)} ms)  fround tile ${gf(tFround)} GFLOP/s  naive ${gf(tNaive)} GFLOP/s  → ${(tNaive / tCore).toFixed(1)}× naive`,
  );
}

function benchAttention(B, H, L, D) {
  const cpu = createCpuExecutor();
  const S = L;
  // [B, T, H, D] stored, seen as [B, H, T, D]: the layout the standard builder's split-heads transpose produces.
  const view = (seed) => new Tensor(random(B * L * H * D, seed), [B, L, H, D]).permute([0, 2, 1, 3]);
  const q = view(3);
  const k = view(4);
  const v = view(5);
  const scale = 1 / Math.sqrt(D);
  const ws = [B, H, L, S];
  const call = (kind, inputs, attrs, outShape) => cpu.dispatch({ kind, node: kind, attrs, inputs, outShape });
  const fused = () =>
    call(
      "attention",
      [q, k, v, undefined],
      { causal: true, window: null, alignment: "top-left", scale, dropoutRate: 0, dropoutSeed: 0, training: false },
      [B, H, L, D],
    );
  const chain = () => {
    const scores = call("score", [q, k], {}, ws);
    const masked = call("mask", [scores, undefined], { causal: true, window: null, alignment: "top-left" }, ws);
    const weights = call("softmax", [masked], { scale }, ws);
    return call("weighted-sum", [weights, v], {}, [B, H, L, D]);
  };
  const tFused = median(fused, 5);
  const tChain = median(chain, 3);
  console.log(
    `attention B${B} H${H} L=S=${L} D${D} causal: fused ${tFused.toFixed(0)} ms, unfused chain ${tChain.toFixed(0)} ms (${(tChain / tFused).toFixed(1)}×)`,
  );
}

function benchAttentionBackward(B, H, L, D) {
  const cpu = createCpuExecutor();
  const S = L;
  const view = (seed) => new Tensor(random(B * L * H * D, seed), [B, L, H, D]).permute([0, 2, 1, 3]);
  const q = view(3);
  const k = view(4);
  const v = view(5);
  const grad = view(6);
  const scale = 1 / Math.sqrt(D);
  const ws = [B, H, L, S];
  const hd = [B, H, L, D];
  const mask = { causal: true, window: null, alignment: "top-left" };
  const attrs = { ...mask, scale, dropoutRate: 0, dropoutSeed: 0, training: false };
  const call = (kind, inputs, a, outShape) => cpu.dispatch({ kind, node: kind, attrs: a, inputs, outShape });
  const out = call("attention", [q, k, v, undefined], attrs, hd);
  let lse;
  const tLse = median(() => (lse = call("attention-lse", [q, k, undefined], { ...mask, scale }, [B, H, L])), 3);
  const t = {};
  for (const wrt of ["q", "k", "v"])
    t[wrt] = median(() => call("attention-grad", [q, k, v, out, grad, lse, undefined], { ...attrs, wrt }, hd), 3);
  // The chain's backward from its kept weights: dW = grad · vᵀ, softmax-grad, mask-grad, then dq = dS · k,
  // dk = dSᵀ · q and dv = Wᵀ · grad (H = Hkv, so weighted-sum does the transposed products too).
  const scores = call("score", [q, k], {}, ws);
  const masked = call("mask", [scores, undefined], mask, ws);
  const weights = call("softmax", [masked], { scale }, ws);
  const chain = () => {
    const dW = call("score", [grad, v], {}, ws);
    const dScores = call("mask-grad", [call("softmax-grad", [weights, dW], { scale }, ws), masked], { scale: 1 }, ws);
    call("weighted-sum", [dScores, k], {}, hd);
    call("weighted-sum", [dScores.permute([0, 1, 3, 2]), q], {}, hd);
    call("weighted-sum", [weights.permute([0, 1, 3, 2]), grad], {}, hd);
  };
  const tChain = median(chain, 3);
  const tFused = tLse + t.q + t.k + t.v;
  console.log(
    `attention backward B${B} H${H} L=S=${L} D${D} causal: fused ${tFused.toFixed(0)} ms (lse ${tLse.toFixed(0)}, dq ${t.q.toFixed(0)}, ` +
      `dk ${t.k.toFixed(0)}, dv ${t.v.toFixed(0)}), unfused chain's rules ${tChain.toFixed(0)} ms`,
  );
}

console.log(`node ${process.version}, single thread`);
benchMatmul("256×256×256 (A·B)", 256, 256, 256, false);
benchMatmul("768×128×768 (A·Bᵀ)", 768, 128, 768, true);
benchAttention(1, 12, 1024, 64);
benchAttentionBackward(1, 12, 1024, 64);
