// The module's copy of the dropout generator (assembly/dropout.ts, in u32) gives the bits of the one TypeScript
// implementation (@attngraph/graph's dropoutBits) over seeds and counters across the uint32 range; dropout masks are
// bit-identical to the CPU executor's and to the testkit's independent reference, on dense and strided inputs.
import { describe, expect, it } from "vitest";
import { dropoutBits } from "@attngraph/graph";
import { dropoutProbe, referenceDropout } from "@attngraph/testkit";
import { onCpu, onWasm, random, wasmExecutor } from "../test-util.js";

const ex = await wasmExecutor();
const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

describe("dropout on wasm vs cpu", () => {
  it("the module's generator gives @attngraph/graph's dropoutBits, bit for bit, over 64 seeds × 1,100 counters", () => {
    const { seeds, counters } = dropoutProbe();
    const mismatches: string[] = [];
    for (const seed of seeds) {
      for (const i of counters) {
        const got = ex.exportsForTests.dropoutBits(seed, i) >>> 0;
        if (got !== dropoutBits(seed, i)) mismatches.push(`seed ${seed}, i ${i}: ${got} vs ${dropoutBits(seed, i)}`);
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it("the kernel's mask is the testkit's independent reference, bit for bit", () => {
    const x = random([8, 512], 3);
    for (const [seed, rate] of [
      [0, 0.5],
      [0xffffffff, 0.1],
      [0x80000000, 0.9],
    ] as const) {
      const got = onWasm(ex, "dropout", { rate, seed, training: true }, [x], x.shape).toFloat32Array();
      const want = referenceDropout(x.toFloat32Array(), seed, rate);
      expect(Array.from(bits(got))).toEqual(Array.from(bits(want)));
    }
  });

  for (const [seed, rate] of [
    [0, 0.5],
    [1, 0.1],
    [1234, 0.3],
    [0xdeadbeef, 0.9],
    [7, 0.999],
  ] as const) {
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
    for (const attrs of [
      { rate: 0.5, seed: 1, training: false },
      { rate: 0, seed: 1, training: true },
    ]) {
      expect(Array.from(onWasm(ex, "dropout", attrs, [x], x.shape).toFloat32Array())).toEqual(
        Array.from(x.toFloat32Array()),
      );
    }
  });
});
