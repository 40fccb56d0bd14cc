import { describe, expect, it } from "vitest";
import {
  attentionCoreFlops,
  blockFlops,
  blockMatmulFlops,
  causalAttentionFlops,
  decodeFlops,
  FLOP_FORMULA,
  gflops,
  problemFlops,
  projectionFlops,
  trainBlockFlops,
  trainCopyFlops,
} from "./flops.js";
import { COPY_SHAPE } from "./problem.js";

describe("causal attention FLOPs", () => {
  it("counts 4 projections of 2·b·T·d² and half of 2·2·b·T²·d", () => {
    const s = { b: 1, t: 128, d: 768, h: 12 };
    expect(projectionFlops(s)).toBe(603_979_776); // 8 · 128 · 768²
    expect(attentionCoreFlops(s)).toBe(25_165_824); // 2 · 128² · 768
    expect(causalAttentionFlops(s)).toBe(629_145_600);
  });

  it("matches multiply-adds counted one by one, with the T×T products halved", () => {
    const s = { b: 2, t: 6, d: 8, h: 2 };
    const D = s.d / s.h;
    let macs = 0;
    macs += 4 * s.b * s.t * s.d * s.d; // each output element of each projection: d multiply-adds
    macs += s.b * s.h * s.t * s.t * D; // Q·Kᵀ, full
    macs += s.b * s.h * s.t * s.t * D; // weights·V, full
    const full = 2 * macs;
    const causal = full - (2 * 2 * s.b * s.t * s.t * s.d) / 2;
    expect(causalAttentionFlops(s)).toBe(causal);
    expect(causalAttentionFlops({ b: 3, t: 5, d: 4, h: 1 })).toBe(8 * 3 * 5 * 16 + 2 * 3 * 25 * 4);
  });

  it("turns FLOPs and milliseconds into GFLOP/s", () => {
    expect(gflops(2e9, 1000)).toBe(2);
    expect(gflops(5e6, 1)).toBe(5);
  });
});

describe("transformer block FLOPs", () => {
  it("counts qkv_proj, out_proj, the two MLP matmuls and the causal attention core", () => {
    const s = { b: 1, t: 128, d: 768, h: 12 };
    expect(blockMatmulFlops(s)).toBe(24 * 128 * 768 * 768); // 1_811_939_328
    expect(blockFlops(s)).toBe(1_811_939_328 + 25_165_824);
    expect(blockFlops({ b: 1, t: 512, d: 768, h: 12 })).toBe(24 * 512 * 768 ** 2 + 2 * 512 ** 2 * 768); // 7.65 GFLOP
    expect(problemFlops("block", s)).toBe(blockFlops(s));
    expect(problemFlops("attention", s)).toBe(causalAttentionFlops(s));
  });

  it("matches multiply-adds counted matmul by matmul, with the T×T products halved", () => {
    const s = { b: 2, t: 6, d: 8, h: 2 };
    const D = s.d / s.h;
    const rows = s.b * s.t;
    let macs = 0;
    macs += rows * (3 * s.d) * s.d; // qkv_proj: [rows, d] · [d, 3d]
    macs += rows * s.d * s.d; // out_proj
    macs += rows * (4 * s.d) * s.d; // mlp.0: [rows, d] · [d, 4d]
    macs += rows * s.d * (4 * s.d); // mlp.2: [rows, 4d] · [4d, d]
    macs += (2 * s.b * s.h * s.t * s.t * D) / 2; // Q·Kᵀ and weights·V, causal half
    expect(blockFlops(s)).toBe(2 * macs);
  });
});

describe("training step FLOPs", () => {
  it("counts each forward matmul three times: forward, input gradient, weight gradient", () => {
    const s = { b: 1, t: 512, d: 768, h: 12 };
    expect(trainBlockFlops(s)).toBe(3 * (24 * 512 * 768 ** 2 + 2 * 512 ** 2 * 768)); // 22.9 GFLOP
    expect(problemFlops("train-block", s)).toBe(trainBlockFlops(s));
    expect(FLOP_FORMULA["train-block"]).toBe("3 · (24·b·T·d² + 2·b·T²·d)");
  });

  it("matches the backward's matmuls counted one by one (block and the copy model's output Linear)", () => {
    const s = { b: 2, t: 6, d: 8, h: 2 };
    const D = s.d / s.h;
    const rows = s.b * s.t;
    // [m, k] · [k, n] forward; dX = dY · Wᵀ is [m, n] · [n, k], dW = Xᵀ · dY is [k, m] · [m, n]: m·k·n MACs each.
    const linear = (m: number, k: number, n: number) => 3 * m * k * n;
    let macs =
      linear(rows, s.d, 3 * s.d) + linear(rows, s.d, s.d) + linear(rows, s.d, 4 * s.d) + linear(rows, 4 * s.d, s.d);
    // Per head: S = Q·Kᵀ [T, D]·[D, T], C = W·V [T, T]·[T, D]; backward dQ, dK (from dS), dW, dV: 6 products, causal half.
    macs += (s.b * s.h * 6 * s.t * s.t * D) / 2;
    expect(trainBlockFlops(s)).toBe(2 * macs);
    const V = 10;
    expect(trainCopyFlops(COPY_SHAPE, V)).toBe(
      3 * blockFlops(COPY_SHAPE) + 2 * linear(COPY_SHAPE.b * COPY_SHAPE.t, COPY_SHAPE.d, V),
    );
    expect(problemFlops("train-copy", COPY_SHAPE)).toBe(trainCopyFlops(COPY_SHAPE, 10)); // 19.8 MFLOP
    expect(trainCopyFlops(COPY_SHAPE, 10)).toBe(19_759_104);
  });
});

describe("decoding step FLOPs", () => {
  it("counts the new token's four projections and its scores and weighted sum over T + 1 keys, all of them", () => {
    const s = { b: 1, t: 1024, d: 768, h: 12 };
    expect(decodeFlops(s)).toBe(8 * 768 ** 2 + 4 * 1025 * 768); // 7.87 MFLOP
    expect(problemFlops("decode", s)).toBe(decodeFlops(s));
    expect(FLOP_FORMULA.decode).toBe("8·b·d² + 4·b·(T + 1)·d");
  });

  it("matches multiply-adds counted one by one", () => {
    const s = { b: 2, t: 6, d: 8, h: 2 };
    const D = s.d / s.h;
    let macs = 4 * s.b * 1 * s.d * s.d; // q, k, v, out_proj of one token: [1, d] · [d, d] per batch entry
    macs += s.b * s.h * 1 * (s.t + 1) * D; // q · Kᵀ over the T cached keys and the new one
    macs += s.b * s.h * 1 * (s.t + 1) * D; // weights · V
    expect(decodeFlops(s)).toBe(2 * macs);
  });
});
