import { describe, expect, it } from "vitest";
import { attentionCoreFlops, causalAttentionFlops, gflops, projectionFlops } from "./flops.js";

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
