// adam-moment on wasm against a float64 loop written here (beta · state + (1 − beta) · g or g², g = grad + wd · param):
// rows of every length mod 4 (the 4-lane path and its tail), first and second moments, weight decay, param absent,
// strided state, grad and param (each and all), scalar and empty tensors, chunks, and the errors.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { adamMomentCase64, eachStrided, stridedOperands, type AdamMomentCase } from "@attngraph/testkit";
import { expectAdamMomentErrors, expectAdamMomentScalarAndEmpty } from "@attngraph/testkit/test-helpers";
import { f64, onWasm, onWasmViews, random, wasmExecutor } from "../test-util.js";
import { dispatchInChunks, failingCall } from "../test-dispatch.js";

const ex = await wasmExecutor();

type Attrs = AdamMomentCase;

/** The op's formula in float64 (testkit's): the kernel computes in float64 too and rounds once, so it matches bit for bit. */
const adamMoment64 = (state: Tensor, grad: Tensor, param: Tensor | undefined, a: Attrs): Float64Array =>
  adamMomentCase64(f64(state), f64(grad), param && f64(param), a);

const run = (s: Tensor, g: Tensor, p: Tensor | undefined, a: Attrs, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "adam-moment", { ...a }, [s, g, p], s.shape, "optim.w.m");
const expectRef = (got: Tensor, s: Tensor, g: Tensor, p: Tensor | undefined, a: Attrs) =>
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(Float32Array.from(adamMoment64(s, g, p, a))));
const positive = (t: Tensor) => new Tensor(t.toFloat32Array().map(Math.abs), t.shape);

describe("adam-moment on wasm", () => {
  it("first and second moments, weight decay and param absent; rows of every length mod 4", () => {
    for (const n of [1, 3, 4, 5, 8, 37]) {
      const g = random([2, 3, n], n, 3);
      const p = random([2, 3, n], n + 100, 2);
      for (const square of [false, true]) {
        const s = square ? positive(random([2, 3, n], n + 50)) : random([2, 3, n], n + 50);
        for (const a of [
          { beta: 0.9, square },
          { beta: 0.999, square, weightDecay: 0.1 },
          { beta: 0, square, weightDecay: 0.5 },
          { beta: 0.8, square, weightDecay: 0 },
        ]) {
          const param = a.weightDecay === undefined ? undefined : p;
          expectRef(run(s, g, param, a), s, g, param, a);
        }
      }
    }
  });

  it("param absent takes the defaults square false, weightDecay 0", () => {
    const got = run(Tensor.from([1, 2, 3, 4], [4]), Tensor.from([0.5, -1, 2, 0], [4]), undefined, { beta: 0.5 });
    expect(Array.from(got.toFloat32Array())).toEqual([0.75, 0.5, 2.5, 2]);
  });

  it("strided state, grad and param (transposed), each and all, both moments; the dense copy of a strided param released", () => {
    const before = ex.inUseBytes;
    const [s, g, p, sT, gT, pT] = stridedOperands(random, [3, 5, 7], 1);
    for (const square of [false, true]) {
      const a = { beta: 0.95, square, weightDecay: 0.01 };
      for (const [x, y, z] of eachStrided([s, g, p], [sT, gT, pT])) expectRef(run(x, y, z, a, true), x, y, z, a);
      expectRef(run(sT, gT, undefined, { beta: 0.95, square }, true), sT, gT, undefined, { beta: 0.95, square });
    }
    expect(ex.inUseBytes).toBe(before);
  });

  it("scalar and empty inputs", () => expectAdamMomentScalarAndEmpty(run, random));

  it("in chunks of a tiny chunkWork (dense and strided): bit for bit one call, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const a = { beta: 0.99, square: true, weightDecay: 0.01 };
    for (const [s, g, p] of [
      [random([6, 50], 7), random([6, 50], 8), random([6, 50], 9)],
      [random([50, 6], 7).transpose(0, 1), random([6, 50], 8), random([50, 6], 9).transpose(0, 1)],
    ] as const) {
      const op = { kind: "adam-moment", node: "optim.w.v", attrs: a, outShape: [6, 50] };
      expectRef(await dispatchInChunks(tiny, op, [s, g, p]), s, g, p, a);
    }
  });

  it("errors name the node and field: weight decay without param, shapes, attributes", () => {
    const before = ex.inUseBytes;
    expectAdamMomentErrors(failingCall(ex, "adam-moment", "optim.w.m", [2, 3]));
    expect(ex.inUseBytes, "nothing left allocated after the errors").toBe(before);
  });
});
