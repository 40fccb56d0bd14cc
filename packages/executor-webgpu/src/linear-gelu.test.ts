// The fused linear-gelu kernel (the projection's tiled matmul with a gelu epilogue) against the unfused pair it
// replaces on this executor, projection then gelu (to float32 rounding: the contract's 1e-6), and against float64
// (linear then gelu in float64): both forms, with and without bias, several tiles in each direction of the matmul
// (rows > 64, Out > 64, In > 16), x strided on the GPU (a permuted x that must be copied, an offset one with doubled
// strides read in place), weight and bias as strided views, the tails of gelu, NaN, and the errors.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, type Input, values, FUSED_TOL } from "./test-gpu.js";
import { gelu64, linear64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

/** Against float64: the float32 matmul's rounding (In terms), through gelu's slope (at most about 1.13). */
const REF_TOL = { abs: 1e-5, rel: 1e-5 };

type Form = "none" | "tanh";

/** Fused, unfused (projection → gelu) and float64, for the same inputs (GPU views allowed: `host` holds the values). */
async function expectLinearGelu(
  approximate: Form,
  host: { x: Tensor; w: Tensor; b?: Tensor },
  inputs: [Input, Input, Input] = [host.x, host.w, host.b],
): Promise<void> {
  const { x, w, b } = host;
  const nIn = x.shape[x.rank - 1]!;
  const nOut = w.shape[0]!;
  const shape = [...x.shape.slice(0, -1), nOut];
  const fused = await ops.run("linear-gelu", { approximate }, inputs, shape);
  expect(fused.shape).toEqual(shape);
  const pre = await ops.dispatch("projection", {}, inputs, shape);
  const pair = await ops.run("gelu", { approximate }, [pre], shape);
  webgpu.release(pre);
  const vsPair = compare(fused, values(pair), FUSED_TOL);
  expect({ vs: "projection → gelu", ok: vsPair.ok, worst: vsPair.worst }).toMatchObject({ ok: true });
  const want = linear64(values(x), nIn, values(w), nOut, b && values(b)).map((v) => gelu64(v, approximate));
  const vsRef = compare(fused, want, REF_TOL);
  expect({ vs: "float64", ok: vsRef.ok, worst: vsRef.worst }).toMatchObject({ ok: true });
}

describe("linear-gelu kernel vs projection → gelu and float64", () => {
  for (const approximate of ["none", "tanh"] as const) {
    it(`${approximate}: small, with and without bias`, async () => {
      const x = randomTensor([2, 3, 6], 1);
      const w = randomTensor([5, 6], 2);
      const b = randomTensor([5], 3);
      await expectLinearGelu(approximate, { x, w, b });
      await expectLinearGelu(approximate, { x, w });
    });

    it(`${approximate}: several tiles each way (70 rows, Out 72, In 20), inputs of scale 2 reaching both tails`, async () => {
      await expectLinearGelu(approximate, {
        x: randomTensor([2, 35, 20], 11, 2),
        w: randomTensor([72, 20], 12),
        b: randomTensor([72], 13),
      });
    });

    it(`${approximate}: x strided on the GPU (copied, or read in place with offset and doubled strides); weight and bias strided`, async () => {
      const x = randomTensor([3, 4, 7], 21);
      const w = randomTensor([6, 7], 22);
      const b = randomTensor([6], 23);
      const permuted = await ops.permuted(x, [2, 0, 1]);
      expect(permuted.strides[2], "the last axis is strided").not.toBe(1);
      const wT = await ops.permuted(w, [1, 0]);
      expect(wT.strides).toEqual([1, 6]);
      for (const input of [permuted, await ops.spaced(x)]) {
        await expectLinearGelu(approximate, { x, w, b }, [input, wT, await ops.spaced(b)]);
        await expectLinearGelu(approximate, { x, w }, [input, await ops.spaced(w), undefined]);
      }
    });
  }

  it("large pre-activations give the input or 0, never NaN; a NaN in x makes its row NaN only", async () => {
    // weight = identity, so the pre-activation is x itself
    const far = [30, -30, 1e4, -1e4, 3e38, -3e38];
    const eye = Tensor.from(
      Array.from({ length: 36 }, (_, k) => (k % 7 === 0 ? 1 : 0)),
      [6, 6],
    );
    for (const approximate of ["none", "tanh"] as const) {
      const got = values(
        await ops.run("linear-gelu", { approximate }, [Tensor.from(far, [1, 6]), eye, undefined], [1, 6]),
      );
      far.forEach((v, k) => expect(got[k], `gelu(${v})`).toBeCloseTo(v > 0 ? Math.fround(v) : 0, 5));
      const nan = values(
        await ops.run(
          "linear-gelu",
          { approximate },
          [Tensor.from([1, Number.NaN, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6], [2, 6]), eye, undefined],
          [2, 6],
        ),
      );
      expect(nan.slice(0, 6).every(Number.isNaN)).toBe(true);
      expect(nan.slice(6).every(Number.isFinite)).toBe(true);
    }
  });

  it("no rows: an empty result, nothing dispatched that fails", async () => {
    const got = await ops.run(
      "linear-gelu",
      { approximate: "none" },
      [Tensor.from([], [0, 4]), randomTensor([3, 4], 31), undefined],
      [0, 3],
    );
    expect(got.shape).toEqual([0, 3]);
  });

  it("errors name the node and field: approximate, weight columns, weight rank, bias length, int32 x, missing weight", async () => {
    const x = randomTensor([2, 4], 41);
    const w = randomTensor([3, 4], 42);
    const err = (attrs: Record<string, unknown>, inputs: Input[], out = [2, 3]) =>
      ops.error("linear-gelu", attrs, inputs, out, "blocks.0.mlp.gelu");
    await expect(err({ approximate: "fast" }, [x, w, undefined])).resolves.toMatchObject({
      code: "attr",
      subject: "blocks.0.mlp.gelu.approximate",
    });
    await expect(err({ approximate: "none" }, [x, randomTensor([3, 5], 43), undefined])).resolves.toMatchObject({
      code: "shape",
      subject: "blocks.0.mlp.gelu.weight",
    });
    await expect(err({ approximate: "none" }, [x, randomTensor([12], 44), undefined])).resolves.toMatchObject({
      code: "shape",
      subject: "blocks.0.mlp.gelu.weight",
    });
    await expect(err({ approximate: "tanh" }, [x, w, randomTensor([4], 45)])).resolves.toMatchObject({
      code: "shape",
      subject: "blocks.0.mlp.gelu.bias",
    });
    await expect(
      err({ approximate: "none" }, [Tensor.int32([1, 2, 3, 4], [1, 4]), w, undefined], [1, 3]),
    ).resolves.toMatchObject({
      code: "input",
      subject: "blocks.0.mlp.gelu.x",
      expected: "float32",
      got: "int32",
    });
    await expect(err({ approximate: "none" }, [x, undefined, undefined])).resolves.toMatchObject({
      code: "input",
      subject: "blocks.0.mlp.gelu.weight",
    });
  });
});
