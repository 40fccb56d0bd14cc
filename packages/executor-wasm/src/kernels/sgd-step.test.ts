// sgd-step on wasm against torch.optim.SGD's update in float64 (testkit's sgdStepCase64) (d = grad + wd · param; u = d, buf,
// or d + momentum · buf with nesterov; param − lr · u): rows of every length mod 4, momentum 0 with buf absent (and a
// buf given but not read), strided param, grad and buf (each and all), chunks, the errors, and a five-step training
// loop of sgd-momentum → sgd-step against a float64 loop of torch's step.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import {
  SGD_LOOPS,
  SGD_STEP_CASES,
  eachStrided,
  stridedOperands,
  sgdLoopLabel,
  sgdStepCase64,
  type SgdStepCase,
} from "@attngraph/testkit";
import { expectSgdLoop, expectSgdStepErrors, expectSgdStepScalarAndEmpty } from "@attngraph/testkit/test-helpers";
import { f64, onWasm, onWasmViews, random, wasmExecutor } from "../test-util.js";
import { dispatchInChunks, failingCall } from "../test-dispatch.js";
import { expectLoopReleased, loopOn } from "./test-optim.js";

const ex = await wasmExecutor();

const run = (p: Tensor, g: Tensor, b: Tensor | undefined, a: SgdStepCase, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "sgd-step", { ...a }, [p, g, b], p.shape, "optim.w.update");
/** Float64 in the module too, the same operations in the same order: the reference rounded once, bit for bit. */
const expectRef = (got: Tensor, p: Tensor, g: Tensor, b: Tensor | undefined, a: SgdStepCase) =>
  expect(Array.from(got.toFloat32Array())).toEqual(
    Array.from(Float32Array.from(sgdStepCase64(f64(p), f64(g), b && f64(b), a))),
  );

describe("sgd-step on wasm", () => {
  it("plain, weight decay, momentum, nesterov; rows of every length mod 4", () => {
    for (const n of [1, 3, 4, 5, 8, 37]) {
      const p = random([3, n], n);
      const g = random([3, n], n + 10, 2);
      const b = random([3, n], n + 20, 2);
      for (const a of SGD_STEP_CASES) {
        const buf = a.momentum ? b : undefined;
        expectRef(run(p, g, buf, a), p, g, buf, a);
      }
    }
  });

  it("momentum 0 with buf absent (the defaults), and with a buf given that it never reads", () => {
    const x = Tensor.from([1, 2, 3, 4, 5], [5]);
    const dx = Tensor.from([0.5, -1, 2, 0, 4], [5]);
    expect(Array.from(run(x, dx, undefined, { lr: 0.5 }).toFloat32Array())).toEqual([0.75, 2.5, 2, 4, 3]);
    const nan = new Tensor(new Float32Array(5).fill(NaN), [5]);
    expect(Array.from(run(x, dx, nan, { lr: 0.5 }).toFloat32Array())).toEqual([0.75, 2.5, 2, 4, 3]);
    expect(
      Array.from(
        run(x, dx, new Tensor(new Float32Array(10).fill(NaN), [5], [2], 1), { lr: 0.5 }, true).toFloat32Array(),
      ),
    ).toEqual([0.75, 2.5, 2, 4, 3]);
  });

  it("strided param, grad and buf (transposed), each and all; the dense copy of a strided buf released", () => {
    const before = ex.inUseBytes;
    const [p, g, b, pT, gT, bT] = stridedOperands(random, [4, 5, 6], 1);
    for (const a of SGD_STEP_CASES) {
      for (const [x, y, z] of eachStrided([p, g, b], [pT, gT, bT])) {
        const buf = a.momentum ? z : undefined;
        expectRef(run(x, y, buf, a, true), x, y, buf, a);
      }
    }
    expect(ex.inUseBytes).toBe(before);
  });

  it("scalar and empty inputs", () => expectSgdStepScalarAndEmpty(run, random));

  it("in chunks of a tiny chunkWork (dense, and strided with a buf copied dense): bit for bit the reference, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    for (const a of [
      { lr: 1e-2, weightDecay: 0.1 },
      { lr: 1e-2, momentum: 0.9 },
      { lr: 1e-2, momentum: 0.9, nesterov: true, weightDecay: 0.01 },
    ]) {
      for (const [p, g, b] of [
        [random([6, 50], 7), random([6, 50], 8), random([6, 50], 9)],
        [random([50, 6], 7).transpose(0, 1), random([6, 50], 8), random([50, 6], 9).transpose(0, 1)],
      ] as const) {
        const buf = a.momentum ? b : undefined;
        const op = { kind: "sgd-step", node: "optim.w.update", attrs: a, outShape: [6, 50] };
        expectRef(await dispatchInChunks(tiny, op, [p, g, buf]), p, g, buf, a);
      }
    }
  });

  it("errors name the node and field: momentum without buf, shapes, attributes", () => {
    const before = ex.inUseBytes;
    expectSgdStepErrors(failingCall(ex, "sgd-step", "optim.w.update", [2, 3]));
    expect(ex.inUseBytes).toBe(before);
  });
});

describe("sgd-momentum → sgd-step on wasm: a training loop", () => {
  for (const a of SGD_LOOPS) {
    it(`5 steps of ${sgdLoopLabel(a)} (weightDecay ${a.weightDecay}) on a [4, 7] parameter, values kept on the executor`, () =>
      expectLoopReleased(ex, () => expectSgdLoop(loopOn(ex), a)));
  }
});
