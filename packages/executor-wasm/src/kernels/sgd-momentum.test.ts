// sgd-momentum on wasm against torch.optim.SGD's buffer update in float64 (testkit's sgdMomentumCase64) (d = grad + wd · param;
// d at t = 1, PyTorch's clone; momentum · buf + (1 − dampening) · d after): rows of every length mod 4 (the 4-lane
// path and its tail), dampening, weight decay, param absent, t as [] and [1], the buffer not read at t = 1, strided
// buf, grad and param (each and all), the step read through a view, invalid steps (a typed error naming
// <node>.step), scalar and empty inputs, chunks, and the errors.
import { describe, expect, it } from "vitest";
import { Tensor, type Shape } from "@attngraph/tensor";
import {
  SGD_MOMENTUM_CASES,
  eachStrided,
  stridedOperands,
  sgdMomentumCase64,
  type SgdMomentumCase,
} from "@attngraph/testkit";
import { expectSgdMomentumErrors, expectSgdMomentumScalarAndEmpty } from "@attngraph/testkit/test-helpers";
import { f64, onWasm, onWasmViews, random, wasmExecutor } from "../test-util.js";
import { dispatchInChunks, failingCall } from "../test-dispatch.js";

const ex = await wasmExecutor();

const step = (t: number, shape: Shape = []) => Tensor.from([t], shape);
const run = (b: Tensor, g: Tensor, p: Tensor | undefined, t: Tensor, a: SgdMomentumCase, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "sgd-momentum", { ...a }, [b, g, p, t], b.shape, "optim.w.buf");
const expectRef = (got: Tensor, b: Tensor, g: Tensor, p: Tensor | undefined, t: number, a: SgdMomentumCase) =>
  expect(Array.from(got.toFloat32Array())).toEqual(
    // the kernel computes in float64 too and rounds once: bit for bit
    Array.from(Float32Array.from(sgdMomentumCase64(f64(b), f64(g), p && f64(p), t, a))),
  );

describe("sgd-momentum on wasm", () => {
  it("momentum, dampening, weight decay and param absent; t = 1, 2, 7 as [] and [1]; rows of every length mod 4", () => {
    for (const n of [1, 3, 4, 5, 8, 37]) {
      const b = random([2, 3, n], n + 50);
      const g = random([2, 3, n], n, 3);
      const p = random([2, 3, n], n + 100, 2);
      for (const a of SGD_MOMENTUM_CASES) {
        const param = a.weightDecay === undefined ? undefined : p;
        for (const [k, t] of [1, 2, 7].entries())
          expectRef(run(b, g, param, step(t, k % 2 ? [1] : []), a), b, g, param, t, a);
      }
    }
  });

  it("t = 1 clones d: the buffer is not read (NaN there does not reach the output), dense or strided", () => {
    const nan = new Tensor(new Float32Array(21).fill(NaN), [3, 7]);
    const nanT = new Tensor(new Float32Array(21).fill(NaN), [7, 3]).transpose(0, 1);
    const g = random([3, 7], 1);
    const p = random([3, 7], 2);
    const a = { momentum: 0.9, dampening: 0.5, weightDecay: 0.1 };
    for (const b of [nan, nanT]) {
      expectRef(run(b, g, p, step(1), a, true), b, g, p, 1, a);
      expect(run(b, g, p, step(1), a, true).toFloat32Array().some(Number.isNaN)).toBe(false);
    }
  });

  it("param absent takes the defaults dampening 0, weightDecay 0; param present with weightDecay 0 adds nothing", () => {
    const got = run(Tensor.from([1, 2, 3, 4], [4]), Tensor.from([0.5, -1, 2, 0], [4]), undefined, step(2), {
      momentum: 0.5,
    });
    expect(Array.from(got.toFloat32Array())).toEqual([1, 0, 3.5, 2]);
    const [b, g, p] = [random([2, 9], 1), random([2, 9], 2), random([2, 9], 3)];
    expect(Array.from(run(b, g, p, step(3), { momentum: 0.8 }).toFloat32Array())).toEqual(
      Array.from(run(b, g, undefined, step(3), { momentum: 0.8 }).toFloat32Array()),
    );
  });

  it("strided buf, grad and param (transposed), each and all, at t = 1 and 4; the dense copy of a strided param released", () => {
    const before = ex.inUseBytes;
    const [b, g, p, bT, gT, pT] = stridedOperands(random, [3, 5, 7], 1);
    const a = { momentum: 0.9, dampening: 0.2, weightDecay: 0.01 };
    for (const t of [1, 4]) {
      for (const [x, y, z] of eachStrided([b, g, p], [bT, gT, pT]))
        expectRef(run(x, y, z, step(t), a, true), x, y, z, t, a);
      expectRef(run(bT, gT, undefined, step(t), { momentum: 0.9 }, true), bT, gT, undefined, t, { momentum: 0.9 });
    }
    expect(ex.inUseBytes).toBe(before);
  });

  it("reads the step through a view: a slice of a steps tensor at an offset, and a reshape of it to []", () => {
    const [b, g] = [random([3, 5], 1), random([3, 5], 2)];
    const steps = Tensor.from([1, 2, 3, 4], [4]);
    for (const t of [new Tensor(steps.data, [1], [1], 2), new Tensor(steps.data, [], [], 2)])
      expectRef(run(b, g, undefined, t, { momentum: 0.9 }, true), b, g, undefined, 3, { momentum: 0.9 });
    expectRef(run(b, g, undefined, new Tensor(steps.data, [], [], 0), { momentum: 0.9 }, true), b, g, undefined, 1, {
      momentum: 0.9,
    });
  });

  it("scalar and empty inputs", () => expectSgdMomentumScalarAndEmpty(run, random));

  it("in chunks of a tiny chunkWork (dense and strided, t = 1 and 3): bit for bit the reference, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const a = { momentum: 0.9, dampening: 0.1, weightDecay: 0.01 };
    for (const t of [1, 3]) {
      for (const [b, g, p] of [
        [random([6, 50], 7), random([6, 50], 8), random([6, 50], 9)],
        [random([50, 6], 7).transpose(0, 1), random([6, 50], 8), random([50, 6], 9).transpose(0, 1)],
      ] as const) {
        const op = { kind: "sgd-momentum", node: "optim.w.buf", attrs: a, outShape: [6, 50] };
        expectRef(await dispatchInChunks(tiny, op, [b, g, p, step(t, [1])]), b, g, p, t, a);
      }
    }
  });

  it("errors name the node and field: invalid steps, the step's shape, weight decay without param, shapes, attributes; the executor still works", () => {
    const before = ex.inUseBytes;
    expectSgdMomentumErrors(failingCall(ex, "sgd-momentum", "optim.w.buf", [2, 3]));
    expect(ex.inUseBytes, "nothing left allocated after the errors").toBe(before);
    const [b, g] = [random([2, 3], 1), random([2, 3], 2)];
    expectRef(run(b, g, undefined, step(2), { momentum: 0.9 }), b, g, undefined, 2, { momentum: 0.9 });
  });
});
