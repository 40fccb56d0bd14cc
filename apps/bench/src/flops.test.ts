import { describe, expect, it } from "vitest";
import { attentionCoreFlops, blockFlops, blockMatmulFlops, causalAttentionFlops, gflops, problemFlops, projectionFlops } from "./flops.js";

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
