// Prepacked weights (derived.ts): an uploaded weight is packed into the matmul's panels once and reused; the numbers
// are those of packing per call bit for bit; the packed copy goes with the weight; a weight that is not an upload, or
// a packed copy that does not fit under the memory limit, falls back to packing per call with the same result.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import type { WasmExecutor } from "./executor.js";
import type { WasmValue } from "./value.js";
import { onCpu, random, wasmExecutor, worst, trapKernel } from "./test-util.js";

const projection = (ex: WasmExecutor, x: WasmValue, w: WasmValue, b: WasmValue | undefined, node = "proj"): Tensor => {
  const outShape = [...x.shape.slice(0, -1), w.shape[0]!];
  const out = ex.dispatch({ kind: "projection", node, attrs: {}, inputs: [x, w, b], outShape });
  const host = ex.download(out).contiguous();
  ex.release(out);
  return host;
};

describe("prepacked weights", () => {
  it("a weight is packed at its first use only, and freed with it", async () => {
    const ex = await wasmExecutor();
    const base = ex.inUseBytes;
    const x = ex.upload(random([2, 7, 300], 1));
    const w = ex.upload(random([20, 300], 2));
    const first = projection(ex, x, w, undefined);
    expect(ex.prepacked.made).toBe(1);
    // 300 deep × 24 padded columns of float32
    expect(ex.prepacked.bytes).toBeGreaterThanOrEqual(300 * 24 * 4);
    for (let i = 0; i < 3; i++) expect(worst(projection(ex, x, w, undefined), first, 0, 0)).toBe(0);
    expect(ex.prepacked.made).toBe(1);
    ex.release(w);
    expect(ex.prepacked.bytes).toBe(0);
    ex.release(x);
    expect(ex.inUseBytes).toBe(base);
  });

  it("another view of the same upload (a transposed weight) gets a layout of its own", async () => {
    const ex = await wasmExecutor();
    const x = ex.upload(random([5, 16], 3));
    const square = random([16, 16], 4);
    const w = ex.upload(square);
    const wt = ex.dispatch({ kind: "transpose", node: "wt", attrs: { perm: [1, 0] }, inputs: [w], outShape: [16, 16] });
    const a = projection(ex, x, w, undefined);
    const b = projection(ex, x, wt, undefined);
    expect(ex.prepacked.made).toBe(2);
    const xs = random([5, 16], 3);
    expect(worst(a, onCpu("projection", {}, [xs, square, undefined], [5, 16]))).toBeLessThan(1);
    expect(worst(b, onCpu("projection", {}, [xs, square.permute([1, 0]), undefined], [5, 16]))).toBeLessThan(1);
  });

  // Edge tiles (rows mod 5 = 1..4, columns mod 8 ≠ 0), k past one and several 256-deep blocks, more rows than one
  // 80-row block, with and without bias.
  const shapes = [
    [1, 1, 1],
    [4, 9, 13],
    [84, 257, 31],
    [163, 600, 16],
    [6, 512, 8],
  ] as const;
  for (const [rows, nIn, nOut] of shapes) {
    it(`[${rows}, ${nIn}] · [${nOut}, ${nIn}]ᵀ: bit for bit the numbers of packing per call`, async () => {
      const packed = await wasmExecutor();
      const perCall = await wasmExecutor({ prepackWeights: false });
      const [xh, wh, bh] = [random([rows, nIn], rows), random([nOut, nIn], nOut + 1), random([nOut], 9)];
      for (const bias of [false, true]) {
        const run = (ex: WasmExecutor) =>
          projection(ex, ex.upload(xh), ex.upload(wh), bias ? ex.upload(bh) : undefined);
        const a = run(packed);
        const b = run(perCall);
        expect(worst(a, b, 0, 0)).toBe(0);
        expect(worst(a, onCpu("projection", {}, [xh, wh, bias ? bh : undefined], [rows, nOut]))).toBeLessThan(1);
      }
      expect(packed.prepacked.made).toBe(2);
      expect(perCall.prepacked.made).toBe(0);
    });
  }

  it("a weight that is not an upload (a kernel's output) is packed per call", async () => {
    const ex = await wasmExecutor();
    const [xh, wh] = [random([9, 40], 5), random([12, 40], 6)];
    const x = ex.upload(xh);
    const w0 = ex.upload(wh);
    const zero = ex.upload(new Tensor(new Float32Array(12 * 40), [12, 40]));
    const w = ex.dispatch({ kind: "add", node: "w", attrs: {}, inputs: [w0, zero], outShape: [12, 40] });
    const got = projection(ex, x, w, undefined);
    expect(ex.prepacked.made).toBe(0);
    expect(worst(got, onCpu("projection", {}, [xh, wh, undefined], [9, 12]))).toBeLessThan(1);
  });

  it("a packed copy that does not fit under the memory limit falls back to packing per call, same numbers", async () => {
    // 448 KiB: the weight (256 KiB) and one k block of per-call panels (~66 KiB) fit, a whole packed copy (256 KiB)
    // more does not.
    const ex = await wasmExecutor({ maxMemoryBytes: 7 * 65536 });
    const [xh, wh] = [random([4, 1024], 8), random([64, 1024], 9)];
    const got = projection(ex, ex.upload(xh), ex.upload(wh), undefined);
    expect(ex.prepacked.made).toBe(0);
    expect(worst(got, onCpu("projection", {}, [xh, wh, undefined], [4, 64]))).toBeLessThan(1);
  });

  it("after a trap replaced the memory, the restored weight is packed again (the old copy is gone with the old memory)", async () => {
    const ex = await wasmExecutor();
    ex.registerKernel("trap", trapKernel);
    const [xh, wh] = [random([6, 70], 10), random([11, 70], 11)];
    const x = ex.upload(xh);
    const w = ex.upload(wh);
    const before = projection(ex, x, w, undefined);
    expect(() => ex.dispatch({ kind: "trap", node: "t", attrs: {}, inputs: [x], outShape: [6, 70] })).toThrow(/trap/);
    expect(ex.prepacked.bytes).toBe(0);
    const after = projection(ex, x, w, undefined);
    expect(ex.prepacked.made).toBe(2);
    expect(worst(after, before, 0, 0)).toBe(0);
  });
});
