// The relaxed-SIMD flavour (f32x4.relaxed_madd in the matmul tile), run by vitest.relaxed.config.ts with
// --experimental-wasm-relaxed-simd: "auto" picks it, it passes the executor contract suite, and it gives the plain
// SIMD flavour's numbers within float rounding (relaxed madd may fuse, so not bit for bit); its fused block ops give
// its own unfused pairs' bits.
import { describe, expect, it } from "vitest";
import { describeExecutorContract } from "@attngraph/testkit/contract";
import { Tensor } from "@attngraph/tensor";
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
    // The other attributes take their declared defaults (checkCall fills them in): no window, top-left, no dropout.
    const attrs = { causal: true, scale: 0.25 };
    const a = (ex: typeof relaxed) => onWasm(ex, "attention", attrs, [q, k, k, undefined], [1, 2, 130, 16]);
    expect(worst(a(relaxed), a(simd))).toBeLessThan(1);
    // The decode path (one query row, K and V read in place) and the CPU executor.
    const q1 = random([1, 2, 1, 64], 7);
    const k1 = random([1, 2, 300, 64], 8);
    const d = (ex: typeof relaxed) =>
      onWasm(ex, "attention", { ...attrs, alignment: "bottom-right" }, [q1, k1, k1, undefined], [1, 2, 1, 64]);
    expect(worst(d(relaxed), d(simd))).toBeLessThan(1);
    // One row (the matvec on the prepacked weight): the 5-row tile's bits on this flavour too.
    const x1 = random([1, 300], 9);
    const w1 = random([45, 300], 10);
    const row = onWasm(relaxed, "projection", {}, [x1, w1, undefined], [1, 45]).toFloat32Array();
    const six = new Float32Array(6 * 300).fill(0.5);
    six.set(x1.toFloat32Array()); // row 0 is x1's: the tile computes it beside 5 others
    const tile = onWasm(
      relaxed,
      "projection",
      {},
      [new Tensor(six, [6, 300]), w1, undefined],
      [6, 45],
    ).toFloat32Array();
    expect(Array.from(new Uint32Array(Float32Array.from(row).buffer))).toEqual(
      Array.from(new Uint32Array(Float32Array.from(tile.slice(0, 45)).buffer)),
    );
  });

  it("the fused block ops give the unfused pairs' bits on the relaxed flavour too", async () => {
    const relaxed = await wasmExecutor({ flavour: "relaxed" });
    const bits = (t: Tensor) => Array.from(new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer));
    const x = random([2, 67, 300], 5);
    const w = random([40, 300], 6);
    const pre = onWasm(relaxed, "projection", {}, [x, w, undefined], [2, 67, 40]);
    const fusedGelu = onWasm(relaxed, "linear-gelu", { approximate: "none" }, [x, w, undefined], [2, 67, 40]);
    expect(bits(fusedGelu)).toEqual(bits(onWasm(relaxed, "gelu", { approximate: "none" }, [pre], [2, 67, 40])));
    const [a, b, g] = [random([2, 5, 24], 7), random([1, 5, 24], 8), random([24], 9)];
    const sum = onWasm(relaxed, "add", {}, [a, b], [2, 5, 24]);
    const ln = onWasm(relaxed, "layer-norm", { eps: 1e-5 }, [sum, g, undefined], [2, 5, 24]);
    const fused = onWasm(relaxed, "add-layer-norm", { eps: 1e-5 }, [a, b, g, undefined], [2, 5, 48]).toFloat32Array();
    for (let r = 0; r < 10; r++) {
      expect(Array.from(fused.subarray(r * 48, r * 48 + 24))).toEqual(
        Array.from(sum.toFloat32Array().subarray(r * 24, (r + 1) * 24)),
      );
      expect(Array.from(fused.subarray(r * 48 + 24, (r + 1) * 48))).toEqual(
        Array.from(ln.toFloat32Array().subarray(r * 24, (r + 1) * 24)),
      );
    }
  });
});

describeExecutorContract("wasm (relaxed SIMD)", () => createWasmExecutor({ flavour: "relaxed" }));
