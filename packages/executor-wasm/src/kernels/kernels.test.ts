// The SIMD kernels against the CPU executor on shapes the contract suite's small cases do not reach: edge tiles (rows
// not a multiple of 5, columns not of 8), depth past one k block (256), more rows than one block (80), and the fused
// attention over many key blocks with every mask, GQA, L != S and dropout.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { cpu, onCpu, onWasm, random, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

describe("matmul-backed kernels on the 5×8 tile", () => {
  for (const [rows, nIn, nOut] of [
    [1, 1, 1],
    [3, 5, 7],
    [67, 300, 13],
    [130, 513, 40],
    [8, 16, 8],
    [84, 40, 9],
    [161, 20, 24],
  ] as const) {
    it(`projection [2, ${rows}, ${nIn}] · [${nOut}, ${nIn}]ᵀ + bias`, () => {
      const x = random([2, rows, nIn], rows + nIn);
      const w = random([nOut, nIn], nOut);
      const b = random([nOut], 7);
      const got = onWasm(ex, "projection", {}, [x, w, b], [2, rows, nOut]);
      expect(worst(got, onCpu("projection", {}, [x, w, b], [2, rows, nOut]), 1e-5, 1e-4)).toBeLessThan(1);
    });
  }

  it("projection of a transposed x and a transposed weight (no copy of W)", () => {
    const x = random([70, 2, 33], 1).permute([1, 0, 2]).permute([0, 1, 2]); // [2, 70, 33] strided rows
    const xt = random([2, 33, 70], 2).permute([0, 2, 1]); // [2, 70, 33] strided along In
    const w = random([33, 17], 3).permute([1, 0]); // [17, 33] transposed
    for (const input of [x, xt]) {
      const got = onWasm(ex, "projection", {}, [input, w, undefined], [2, 70, 17]);
      expect(worst(got, onCpu("projection", {}, [input, w, undefined], [2, 70, 17]))).toBeLessThan(1);
    }
  });

  it("score and weighted-sum on transposed views with GQA (H=6, Hkv=2), L=70, S=131", () => {
    const q = random([2, 70, 6, 20], 4).permute([0, 2, 1, 3]);
    const k = random([2, 131, 2, 20], 5).permute([0, 2, 1, 3]);
    const v = random([2, 131, 2, 12], 6).permute([0, 2, 1, 3]);
    const s = onWasm(ex, "score", {}, [q, k], [2, 6, 70, 131]);
    expect(worst(s, onCpu("score", {}, [q, k], [2, 6, 70, 131]))).toBeLessThan(1);
    const w = random([2, 6, 70, 131], 7);
    const c = onWasm(ex, "weighted-sum", {}, [w, v], [2, 6, 70, 12]);
    expect(worst(c, onCpu("weighted-sum", {}, [w, v], [2, 6, 70, 12]))).toBeLessThan(1);
    // A weights view strided along S is copied first; same numbers.
    const wt = random([2, 6, 131, 70], 8).permute([0, 1, 3, 2]);
    expect(
      worst(
        onWasm(ex, "weighted-sum", {}, [wt, v], [2, 6, 70, 12]),
        onCpu("weighted-sum", {}, [wt, v], [2, 6, 70, 12]),
      ),
    ).toBeLessThan(1);
  });
});

describe("fused attention over many key blocks", () => {
  const B = 2;
  const cases = [
    { label: "causal L=S=200", H: 4, Hkv: 4, L: 200, S: 200, D: 16, causal: true, window: null, alignment: "top-left" },
    {
      label: "no mask L=70 S=150, D=20 Dv=12",
      H: 2,
      Hkv: 2,
      L: 70,
      S: 150,
      D: 20,
      Dv: 12,
      causal: false,
      window: null,
      alignment: "top-left",
    },
    {
      label: "causal bottom-right L=50 S=190, GQA 6/3",
      H: 6,
      Hkv: 3,
      L: 50,
      S: 190,
      D: 8,
      causal: true,
      window: null,
      alignment: "bottom-right",
    },
    {
      label: "window 37 L=S=260, MQA",
      H: 4,
      Hkv: 1,
      L: 260,
      S: 260,
      D: 16,
      causal: true,
      window: 37,
      alignment: "top-left",
    },
    {
      label: "causal top-left L=130 S=40 (rows with no key)",
      H: 2,
      Hkv: 2,
      L: 130,
      S: 40,
      D: 8,
      causal: true,
      window: null,
      alignment: "bottom-right",
    },
  ] as const;
  for (const c of cases) {
    for (const padded of [false, true]) {
      it(`${c.label}${padded ? ", key padding" : ""}`, () => {
        const Dv = "Dv" in c ? c.Dv : c.D;
        const q = random([B, c.L, c.H, c.D], 11).permute([0, 2, 1, 3]);
        const k = random([B, c.S, c.Hkv, c.D], 12, 2).permute([0, 2, 1, 3]);
        const v = random([B, c.S, c.Hkv, Dv], 13).permute([0, 2, 1, 3]);
        const padMask = padded
          ? new Tensor(
              random([B, c.S], 14).data.map((x) => (x > 0.3 ? 1 : 0)),
              [B, c.S],
            )
          : undefined;
        const attrs = {
          causal: c.causal,
          window: c.window,
          alignment: c.alignment,
          scale: 1 / Math.sqrt(c.D),
        }; // no dropout: the declared default
        const shape = [B, c.H, c.L, Dv];
        const got = onWasm(ex, "attention", attrs, [q, k, v, padMask], shape);
        const want = onCpu("attention", attrs, [q, k, v, padMask], shape);
        expect(worst(got, want, 1e-5, 1e-4)).toBeLessThan(1);
        // and the unfused chain on wasm gives the same numbers
        const s = onWasm(ex, "score", {}, [q, k], [B, c.H, c.L, c.S]);
        const m = onWasm(
          ex,
          "mask",
          { causal: c.causal, window: c.window, alignment: c.alignment },
          [s, padMask],
          s.shape,
        );
        const p = onWasm(ex, "softmax", { scale: attrs.scale }, [m], s.shape);
        const chain = onWasm(ex, "weighted-sum", {}, [p, v], shape);
        expect(worst(got, chain, 1e-5, 1e-4)).toBeLessThan(1);
      });
    }
  }

  it("dropout inside the fused kernel drops what the CPU executor's fused kernel drops", () => {
    const [H, L, S, D] = [3, 90, 90, 16];
    const q = random([B, H, L, D], 21);
    const k = random([B, H, S, D], 22);
    const v = random([B, H, S, D], 23);
    for (const seed of [0, 7, 0xdeadbeef]) {
      const attrs = {
        causal: true,
        window: null,
        alignment: "top-left",
        scale: 0.25,
        dropoutRate: 0.3,
        dropoutSeed: seed,
        training: true,
      };
      const got = onWasm(ex, "attention", attrs, [q, k, v, undefined], [B, H, L, D]);
      const want = onCpu("attention", attrs, [q, k, v, undefined], [B, H, L, D]);
      expect(worst(got, want, 1e-5, 1e-4)).toBeLessThan(1);
      const undropped = onCpu("attention", { ...attrs, training: false }, [q, k, v, undefined], [B, H, L, D]);
      expect(worst(got, undropped, 1e-5, 1e-4)).toBeGreaterThan(1); // the mask did something
    }
  });

  it("a NaN score makes its row NaN, as the unfused softmax; other rows are unaffected", () => {
    const q = random([1, 1, 70, 8], 31);
    const data = q.toFloat32Array();
    data[66 * 8 + 3] = NaN;
    const qn = new Tensor(data, q.shape);
    const k = random([1, 1, 70, 8], 32);
    const attrs = {}; // every attribute its declared default: no mask, scale 1, no dropout
    const got = onWasm(ex, "attention", attrs, [qn, k, k, undefined], [1, 1, 70, 8]).toFloat32Array();
    expect(got.slice(66 * 8, 67 * 8).every(Number.isNaN)).toBe(true);
    expect(got.filter(Number.isNaN).length).toBe(8);
  });

  it("keeps the CPU reference honest: the helpers compare different numbers as different", () => {
    const a = random([4, 4], 1);
    expect(worst(a, random([4, 4], 2))).toBeGreaterThan(1);
    expect(cpu.name).toBe("cpu");
  });
});
