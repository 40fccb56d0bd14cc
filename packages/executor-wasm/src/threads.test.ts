// The threaded executor (`threads: 2`): workers start in Node, the projection's and the fused attention's numbers
// are those of one thread bit for bit, and a bad thread count is a typed error.
import { afterAll, describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { createWasmExecutor } from "./index.js";
import { onWasm, random, wasmExecutor } from "./test-util.js";

const bits = (t: { toFloat32Array(): Float32Array }) =>
  Array.from(new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer));

const one = await wasmExecutor({ flavour: "simd" });
const two = await wasmExecutor({ flavour: "simd", threads: 2 });
afterAll(() => {
  one.dispose();
  two.dispose();
});

describe("wasm executor with threads: 2", () => {
  it("runs two threads in Node", () => {
    expect(two.threading).toEqual({ requested: 2, threads: 2 });
    expect(two.describe()).toBe("simd flavour, 2 threads");
    expect(one.describe()).toBe("simd flavour, 1 thread");
  });

  for (const [rows, nIn, nOut] of [
    [128, 256, 384],
    [37, 300, 45],
    [7, 768, 768],
    [203, 64, 1000],
  ] as const) {
    it(`projection [${rows}, ${nIn}] · [${nOut}, ${nIn}]ᵀ + bias: the one-thread bits`, () => {
      const x = random([rows, nIn], 1);
      const w = random([nOut, nIn], 2);
      const b = random([nOut], 3);
      const before = two.stats.threaded;
      const got = onWasm(two, "projection", {}, [x, w, b], [rows, nOut]);
      // Big enough to split (two calls of at least 40 rows, and 2^20 multiply-adds): the workers ran.
      expect(two.stats.threaded - before).toBe(rows >= 80 && rows * nIn * nOut >= 2 ** 20 ? 1 : 0);
      expect(bits(got)).toEqual(bits(onWasm(one, "projection", {}, [x, w, b], [rows, nOut])));
    });
  }

  // A decoding step's projections (one to three rows against the packed weight): split by columns, whole passes of 24.
  for (const [rows, nIn, nOut] of [
    [1, 768, 768],
    [2, 300, 1000],
    [3, 512, 77],
    [1, 64, 20],
    [2, 1000, 205],
    [1, 3072, 768],
  ] as const) {
    it(`projection of ${rows} row${rows > 1 ? "s" : ""} [${nIn}] · [${nOut}, ${nIn}]ᵀ + bias: columns split, the one-thread bits`, () => {
      const x = random([rows, nIn], 4);
      const w = random([nOut, nIn], 5);
      const b = random([nOut], 6);
      const before = two.stats.threaded;
      const got = onWasm(two, "projection", {}, [x, w, b], [rows, nOut]);
      // Counted in bytes of weight streamed (4 · rows · in · out) against 2^20; 20 columns fit one pass: no split.
      expect(two.stats.threaded - before).toBe(4 * rows * nIn * nOut >= 2 ** 20 && nOut > 24 ? 1 : 0);
      expect(bits(got)).toEqual(bits(onWasm(one, "projection", {}, [x, w, b], [rows, nOut])));
    });
  }

  // A worker that read the job number only after saying "ready" could miss a job posted at once (a hang, seen first in
  // the CLI's conformance run): each fresh executor here splits a call the moment init() returns.
  it("runs a job posted the moment the workers are ready (10 fresh executors)", async () => {
    const x = random([10, 8], 9);
    const w = random([8, 8], 10);
    const want = bits(onWasm(one, "projection", {}, [x, w, undefined], [10, 8]));
    for (let i = 0; i < 10; i++) {
      const ex = await wasmExecutor({ flavour: "simd", threads: 2, parallelWork: 0 });
      try {
        expect(bits(onWasm(ex, "projection", {}, [x, w, undefined], [10, 8]))).toEqual(want);
        expect(ex.stats.threaded).toBe(1);
      } finally {
        ex.dispose();
      }
    }
  });

  // After an idle spell a worker is asleep in Atomics.wait and wakes late (up to milliseconds on a 2-core VM): the host
  // runs a job alone, ends it without waiting, posts the next while the worker is still waking. Kernels back to back
  // after pauses of 5 and 30 ms, every one split, every output the one-thread bits.
  it("jobs posted right after idle pauses (the worker waking late) keep the one-thread bits", async () => {
    const x = [random([128, 256], 31), random([96, 256], 32)];
    const w = random([384, 256], 33);
    const b = random([384], 34);
    const [q, k, v] = [35, 36, 37].map((seed) => random([2, 4, 64, 32], seed));
    const attrs = { causal: true, alignment: "bottom-right", scale: 1 / Math.sqrt(32) };
    const run = (ex: typeof one) => [
      ...x.map((xi) => bits(onWasm(ex, "projection", {}, [xi, w, b], [xi.shape[0]!, 384]))),
      bits(onWasm(ex, "attention", attrs, [q!, k!, v!, undefined], [2, 4, 64, 32])),
    ];
    const want = run(one);
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setTimeout(resolve, i % 3 === 0 ? 30 : 5));
      const before = two.stats.threaded;
      expect(run(two)).toEqual(want);
      expect(two.stats.threaded - before).toBe(3);
    }
  });

  it("splits every call it can with parallelWork 0 (what the conformance runner asks for)", async () => {
    const all = await wasmExecutor({ flavour: "simd", threads: 2, parallelWork: 0 });
    try {
      const x = random([10, 8], 7);
      const w = random([8, 8], 8);
      const got = onWasm(all, "projection", {}, [x, w, undefined], [10, 8]);
      expect(all.stats.threaded).toBe(1);
      expect(bits(got)).toEqual(bits(onWasm(one, "projection", {}, [x, w, undefined], [10, 8])));
    } finally {
      all.dispose();
    }
  });

  // [B, H, Hkv, L, S, D]: by batch (B ≥ threads), by kv head (B = 1), GQA groups kept whole, one kv head (MQA: by batch).
  for (const [B, H, Hkv, L, S, D] of [
    [4, 4, 4, 64, 64, 32],
    [1, 12, 12, 128, 128, 64],
    [1, 8, 2, 100, 130, 32],
    [3, 6, 1, 70, 70, 16],
  ] as const) {
    for (const variant of ["causal, padded", "window 33, dropout 0.2"] as const) {
      it(`fused attention B${B} H${H} Hkv${Hkv} L${L} S${S} D${D}, ${variant}: the one-thread bits`, () => {
        const q = random([B, H, L, D], 11);
        const k = random([B, Hkv, S, D], 12);
        const v = random([B, Hkv, S, D], 13);
        const dropping = variant.includes("dropout");
        const pad = dropping
          ? undefined
          : new Tensor(
              random([B, S], 14).data.map((x) => (x > -0.8 ? 1 : 0)),
              [B, S],
            );
        const attrs = {
          causal: true,
          window: dropping ? 33 : null,
          alignment: "bottom-right",
          scale: 1 / Math.sqrt(D),
          dropoutRate: dropping ? 0.2 : 0,
          dropoutSeed: 7,
          training: dropping,
        };
        const before = two.stats.threaded;
        const got = onWasm(two, "attention", attrs, [q, k, v, pad], [B, H, L, D]);
        expect(two.stats.threaded - before).toBe(B * H * L * S * 2 * D >= 2 ** 20 && (B > 1 || Hkv > 1) ? 1 : 0);
        expect(bits(got)).toEqual(bits(onWasm(one, "attention", attrs, [q, k, v, pad], [B, H, L, D])));
      });
    }
  }

  // The decode path (at most 16 query rows, no dropout: attentionDecode reads K and V in place), split by batch or kv
  // head when the K and V it streams reach 2^20 bytes: a decoding step over a 1025-position cache, GQA groups of 4 with
  // 3 query rows (split by kv head), a padded batch (split by batch); below the threshold, one thread.
  for (const [B, H, Hkv, L, S, D] of [
    [1, 12, 12, 1, 1025, 64],
    [1, 8, 2, 3, 2100, 32],
    [1, 8, 2, 3, 700, 32],
    [3, 4, 4, 1, 300, 64],
    [1, 12, 12, 1, 129, 64],
  ] as const) {
    it(`decode-path attention B${B} H${H} Hkv${Hkv} L${L} S${S} D${D}, causal bottom-right, padded: the one-thread bits`, () => {
      const q = random([B, H, L, D], 21);
      const k = random([B, Hkv, S, D], 22);
      const v = random([B, Hkv, S, D], 23);
      const pad = new Tensor(
        random([B, S], 24).data.map((x) => (x > -0.8 ? 1 : 0)),
        [B, S],
      );
      const attrs = { causal: true, alignment: "bottom-right", scale: 1 / Math.sqrt(D) }; // the rest declared defaults
      const before = two.stats.threaded;
      const got = onWasm(two, "attention", attrs, [q, k, v, pad], [B, H, L, D]);
      expect(two.stats.threaded - before).toBe(4 * B * Hkv * S * 2 * D >= 2 ** 20 && (B > 1 || Hkv > 1) ? 1 : 0);
      expect(bits(got)).toEqual(bits(onWasm(one, "attention", attrs, [q, k, v, pad], [B, H, L, D])));
    });
  }

  it("rejects a bad thread count naming the option", () => {
    for (const threads of [0, 1.5, 17]) {
      let err: unknown;
      try {
        createWasmExecutor({ threads });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AttnGraphError);
      expect(String(err)).toContain("executor wasm.threads");
    }
  });
});
