// The fused add-layer-norm kernel ([a + b | LayerNorm(a + b)] on the last axis) against the unfused pair on this
// executor, add then layer-norm (the sum half must be exactly the add kernel's, the norm half within the contract's
// 1e-6), and against float64: the sum is one float32 addition per element, so it must equal fround(a + b) exactly, and
// the norm is compared with a float64 layer norm of those float32 sums. Affine, weight only and plain; rows longer than
// a workgroup; broadcasting (b [1, T, E] over [B, T, E], a bias-like [E], a on the stretched side, a last axis of 1);
// a and b strided and offset on the GPU; constant rows (exactly the bias), rows offset by 1e4, NaN; and the errors.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, type Input, values, FUSED_TOL } from "./test-gpu.js";
import { add64, layerNorm64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const REF_TOL = { abs: 1e-5, rel: 1e-5 };

/** Rows of the fused output [rows, 2E] split into their halves. */
function halves(t: Tensor, e: number): { sum: number[]; norm: number[] } {
  const v = values(t);
  const sum: number[] = [];
  const norm: number[] = [];
  for (let o = 0; o < v.length; o += 2 * e) {
    sum.push(...v.slice(o, o + e));
    norm.push(...v.slice(o + e, o + 2 * e));
  }
  return { sum, norm };
}

interface Host {
  readonly a: Tensor;
  readonly b: Tensor;
  readonly w?: Tensor;
  readonly bias?: Tensor;
}

/** Fused, unfused (add → layer-norm) and float64 for the same inputs (GPU views allowed: `host` holds the values). */
async function expectAddLayerNorm(
  host: Host,
  sumShape: number[],
  eps = 1e-5,
  inputs: [Input, Input, Input, Input] = [host.a, host.b, host.w, host.bias],
): Promise<void> {
  const e = sumShape[sumShape.length - 1]!;
  const outShape = [...sumShape.slice(0, -1), 2 * e];
  const fused = await ops.run("add-layer-norm", { eps }, inputs, outShape);
  expect(fused.shape).toEqual(outShape);
  const got = halves(fused, e);

  const sum = await ops.dispatch("add", {}, [inputs[0], inputs[1]], sumShape);
  const ln = await ops.run("layer-norm", { eps }, [sum, inputs[2], inputs[3]], sumShape);
  const added = await webgpu.download(sum);
  webgpu.release(sum);
  expect(got.sum, "the sum half is the add kernel's, bit for bit").toEqual(values(added));
  const vsPair = compare(got.norm, values(ln), FUSED_TOL);
  expect({ vs: "add → layer-norm", ok: vsPair.ok, worst: vsPair.worst }).toMatchObject({ ok: true });

  const sum32 = add64(values(host.a), host.a.shape, values(host.b), host.b.shape, sumShape).map(Math.fround);
  expect(got.sum, "the sum is one float32 addition").toEqual(sum32);
  const want = layerNorm64(sum32, e, eps, host.w && values(host.w), host.bias && values(host.bias));
  const vsRef = compare(got.norm, want, REF_TOL);
  expect({ vs: "float64", ok: vsRef.ok, worst: vsRef.worst }).toMatchObject({ ok: true });
}

describe("add-layer-norm kernel vs add → layer-norm and float64", () => {
  for (const e of [8, 150]) {
    it(`E = ${e}: affine, weight only and plain; eps 1e-5 and 1e-2`, async () => {
      const a = randomTensor([2, 3, e], e, 2);
      const b = randomTensor([2, 3, e], e + 1);
      const w = randomTensor([e], e + 2);
      const bias = randomTensor([e], e + 3);
      await expectAddLayerNorm({ a, b, w, bias }, [2, 3, e]);
      await expectAddLayerNorm({ a, b, w }, [2, 3, e]);
      await expectAddLayerNorm({ a, b }, [2, 3, e], 1e-2);
    });
  }

  const broadcasts: [string, number[], number[], number[]][] = [
    ["b [1, T, E] over a [B, T, E] (a positional embedding)", [3, 4, 6], [1, 4, 6], [3, 4, 6]],
    ["a [1, T, E] stretched over b [B, T, E]", [1, 4, 6], [3, 4, 6], [3, 4, 6]],
    ["b [E] over a [B, T, E]", [3, 4, 6], [6], [3, 4, 6]],
    ["b [B, T, 1]: a last axis of 1 stretched over E", [2, 3, 5], [2, 3, 1], [2, 3, 5]],
    ["rank 1: one row", [9], [9], [9]],
  ];
  for (const [label, as, bs, out] of broadcasts) {
    it(`broadcasting: ${label}, affine and not`, async () => {
      const a = randomTensor(as, as.length * 10 + 1);
      const b = randomTensor(bs, bs.length * 10 + 2);
      const e = out[out.length - 1]!;
      await expectAddLayerNorm({ a, b, w: randomTensor([e], 3), bias: randomTensor([e], 4) }, out);
      await expectAddLayerNorm({ a, b }, out);
    });
  }

  it("a and b strided and offset on the GPU (the last axis not stride 1), on either side of a broadcast; weight and bias strided", async () => {
    const e = 12;
    const a = randomTensor([3, 4, e], 21);
    const pos = randomTensor([1, 4, e], 22);
    const w = randomTensor([e], 23);
    const bias = randomTensor([e], 24);
    const permuted = await ops.permuted(a, [2, 0, 1]);
    expect(permuted.strides[2], "the last axis is strided").not.toBe(1);
    await expectAddLayerNorm({ a, b: pos, w, bias }, [3, 4, e], 1e-5, [
      permuted,
      await ops.spaced(pos),
      await ops.spaced(w),
      await ops.spaced(bias),
    ]);
    await expectAddLayerNorm({ a: pos, b: a, w, bias }, [3, 4, e], 1e-5, [
      await ops.permuted(pos, [1, 2, 0]),
      await ops.spaced(a),
      w,
      bias,
    ]);
    await expectAddLayerNorm({ a, b: a }, [3, 4, e], 1e-5, [await ops.spaced(a), permuted, undefined, undefined]);
  });

  it("a constant row gives exactly the bias (+0 without one, never -0 or NaN); a 1e4 offset costs no accuracy", async () => {
    const e = 7;
    const w = randomTensor([e], 31);
    const bias = randomTensor([e], 32);
    // 0.05 + 0.05 rounds to the float 0.1, which is no sum of seven equal floats either: a mean taken of the row would
    // leave deviations of an ulp, which 1/sqrt(eps) magnifies.
    const rows = [new Array<number>(e).fill(0.05), new Array<number>(e).fill(-1.5e5), new Array<number>(e).fill(0)];
    const a = Tensor.from(rows.flat(), [rows.length, e]);
    const got = halves(await ops.run("add-layer-norm", { eps: 1e-5 }, [a, a, w, bias], [rows.length, 2 * e]), e);
    expect(got.sum).toEqual(rows.flat().map((v) => Math.fround(Math.fround(v) + Math.fround(v))));
    expect(got.norm).toEqual([...values(bias), ...values(bias), ...values(bias)]);
    const plain = halves(await ops.run("add-layer-norm", { eps: 1e-5 }, [a, a, w, undefined], [rows.length, 2 * e]), e);
    expect(
      plain.norm.every((v) => Object.is(v, 0)),
      "+0 everywhere, not -0 from a negative weight",
    ).toBe(true);

    const far = Tensor.from(
      Array.from({ length: 2 * e }, (_, i) => 1e4 + (i % 3) * 0.5),
      [2, e],
    );
    const step = Tensor.from(
      Array.from({ length: 2 * e }, (_, i) => (i >= e ? 0.25 : 0)),
      [2, e],
    );
    await expectAddLayerNorm({ a: far, b: step, w, bias }, [2, e]);
  });

  it("a NaN or an infinite sum makes its row's norm NaN and leaves the other rows alone", async () => {
    const a = Tensor.from([1, Number.NaN, 3, 4, 1, 2, 3, 4, Infinity, 0, 0, 0], [3, 4]);
    const b = Tensor.from([0, 0, 0, 0], [4]);
    const got = halves(await ops.run("add-layer-norm", { eps: 1e-5 }, [a, b, undefined, undefined], [3, 8]), 4);
    expect(got.sum.map(String)).toEqual(["1", "NaN", "3", "4", "1", "2", "3", "4", "Infinity", "0", "0", "0"]);
    expect(got.norm.slice(0, 4).every(Number.isNaN)).toBe(true);
    expect(got.norm.slice(8).every(Number.isNaN)).toBe(true);
    expect(compare(got.norm.slice(4, 8), layerNorm64([1, 2, 3, 4], 4, 1e-5), REF_TOL).ok).toBe(true);
  });

  it("no rows: an empty result", async () => {
    const got = await ops.run(
      "add-layer-norm",
      { eps: 1e-5 },
      [Tensor.from([], [0, 4]), randomTensor([4], 33), undefined, undefined],
      [0, 8],
    );
    expect(got.shape).toEqual([0, 8]);
  });

  it("errors name the node and field: b not broadcastable, outShape, weight length and rank, bias length, eps, int32 a", async () => {
    const a = randomTensor([2, 4], 41);
    const b = randomTensor([2, 4], 42);
    const node = "blocks.0.residual+ln2";
    const err = (attrs: Record<string, unknown>, inputs: Input[], out = [2, 8]) =>
      ops.error("add-layer-norm", attrs, inputs, out, node);
    await expect(err({ eps: 1e-5 }, [a, randomTensor([3], 43), undefined, undefined])).resolves.toMatchObject({
      code: "shape",
      subject: `${node}.b`,
    });
    await expect(err({ eps: 1e-5 }, [a, b, undefined, undefined], [2, 4])).resolves.toMatchObject({
      code: "shape",
      subject: `${node}.outShape`,
    });
    await expect(err({ eps: 1e-5 }, [a, b, randomTensor([5], 44), undefined])).resolves.toMatchObject({
      code: "shape",
      subject: `${node}.weight`,
    });
    await expect(err({ eps: 1e-5 }, [a, b, randomTensor([1, 4], 45), undefined])).resolves.toMatchObject({
      code: "shape",
      subject: `${node}.weight`,
    });
    await expect(err({ eps: 1e-5 }, [a, b, undefined, randomTensor([3], 46)])).resolves.toMatchObject({
      code: "shape",
      subject: `${node}.bias`,
    });
    await expect(err({ eps: 0 }, [a, b, undefined, undefined])).resolves.toMatchObject({
      code: "attr",
      subject: `${node}.eps`,
    });
    await expect(
      err({ eps: 1e-5 }, [Tensor.int32([1, 2, 3, 4, 5, 6, 7, 8], [2, 4]), b, undefined, undefined]),
    ).resolves.toMatchObject({
      code: "input",
      subject: `${node}.a`,
      expected: "float32",
      got: "int32",
    });
  });
});
