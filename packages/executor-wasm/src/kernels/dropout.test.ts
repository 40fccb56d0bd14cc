// Dropout masks are bit-identical to the CPU executor's (the same counter-based generator), for the same seed and
// shape, on dense and strided inputs and across the 2³² index wrap of the seed mixing; the module's own bits match
// the spec's test vectors.
import { describe, expect, it } from "vitest";
import { dropoutBits } from "@attngraph/executor-cpu";
import { onCpu, onWasm, random, wasmExecutor } from "../test-util.js";

const ex = await wasmExecutor();
const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

describe("dropout on wasm vs cpu", () => {
  it("the module's bits equal the spec's test vectors and the CPU executor's", () => {
    const vectors: Record<number, number[]> = {
      0: [0, 2462723854, 1020716019, 454327756],
      42: [3118121311, 1867726200, 3231533055, 1591899333],
      4294967295: [3807975093, 2159115811, 1733375546, 3755613047],
    };
    for (const [seed, want] of Object.entries(vectors)) {
      expect(want.map((_, i) => ex.exportsForTests.dropoutBits(Number(seed), i) >>> 0)).toEqual(want);
    }
    for (const i of [0, 1, 1000, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]) expect(ex.exportsForTests.dropoutBits(123, i) >>> 0).toBe(dropoutBits(123, i));
  });

  for (const [seed, rate] of [[0, 0.5], [1, 0.1], [1234, 0.3], [0xdeadbeef, 0.9], [7, 0.999]] as const) {
    it(`bit-identical output, seed ${seed}, rate ${rate}`, () => {
      const x = random([3, 5, 7, 11], seed + 1);
      const attrs = { rate, seed, training: true };
      const got = onWasm(ex, "dropout", attrs, [x], x.shape).toFloat32Array();
      const want = onCpu("dropout", attrs, [x], x.shape).toFloat32Array();
      expect(Array.from(bits(got))).toEqual(Array.from(bits(want)));
      expect(got.some((v) => v === 0)).toBe(true);
    });
  }

  it("bit-identical on a strided view (the counter is the output's row-major index)", () => {
    const x = random([4, 9, 6], 5).permute([2, 0, 1]);
    const attrs = { rate: 0.4, seed: 77, training: true };
    const got = onWasm(ex, "dropout", attrs, [x], x.shape).toFloat32Array();
    expect(Array.from(bits(got))).toEqual(Array.from(bits(onCpu("dropout", attrs, [x], x.shape).toFloat32Array())));
  });

  it("eval mode and rate 0 are the identity", () => {
    const x = random([2, 3], 6);
    for (const attrs of [{ rate: 0.5, seed: 1, training: false }, { rate: 0, seed: 1, training: true }]) {
      expect(Array.from(onWasm(ex, "dropout", attrs, [x], x.shape).toFloat32Array())).toEqual(Array.from(x.toFloat32Array()));
    }
  });
});
