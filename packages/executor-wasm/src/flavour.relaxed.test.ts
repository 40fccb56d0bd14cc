// The relaxed-SIMD flavour (f32x4.relaxed_madd in the matmul tile), run by vitest.relaxed.config.ts with
// --experimental-wasm-relaxed-simd: "auto" picks it, it passes the executor contract suite, and it gives the plain
// SIMD flavour's numbers within float rounding (relaxed madd may fuse, so not bit for bit).
import { describe, expect, it } from "vitest";
import { describeExecutorContract } from "@attngraph/testkit/contract";
import { wasmBytes } from "./module.js";
import { createWasmExecutor } from "./register-kernels.js";
import { onWasm, random, wasmExecutor, worst } from "./test-util.js";

describe("relaxed SIMD flavour", () => {
  it("this engine validates the relaxed module (the flag is on) and auto picks it", async () => {
    expect(WebAssembly.validate(await wasmBytes("relaxed"))).toBe(true);
    expect((await wasmExecutor()).flavour).toBe("relaxed");
  });

  it("matches the plain SIMD flavour on projection and fused attention", async () => {
    const relaxed = await wasmExecutor({ flavour: "relaxed" });
    const simd = await wasmExecutor({ flavour: "simd" });
    expect([relaxed.flavour, simd.flavour]).toEqual(["relaxed", "simd"]);
    const x = random([2, 67, 300], 1);
    const w = random([40, 300], 2);
    const p = (ex: typeof relaxed) => onWasm(ex, "projection", {}, [x, w, undefined], [2, 67, 40]);
    expect(worst(p(relaxed), p(simd))).toBeLessThan(1);
    const q = random([1, 2, 130, 16], 3);
    const k = random([1, 2, 130, 16], 4);
    const attrs = { causal: true, window: null, alignment: "top-left", scale: 0.25, dropoutRate: 0, dropoutSeed: 0, training: false };
    const a = (ex: typeof relaxed) => onWasm(ex, "attention", attrs, [q, k, k, undefined], [1, 2, 130, 16]);
    expect(worst(a(relaxed), a(simd))).toBeLessThan(1);
  });
});

describeExecutorContract("wasm (relaxed SIMD)", () => createWasmExecutor({ flavour: "relaxed" }));
