// The layer-norm kernel against a float64 two-pass LayerNorm: affine and plain, rows longer than a workgroup, x strided
// and offset on the GPU (not only dense uploads), weight and bias as strided views, constant rows (exactly the bias,
// never NaN), rows offset by 1e4, and the errors (shapes, eps, dtype) naming the node and field.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";
import { layerNorm64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const TOL = { abs: 1e-5, rel: 1e-5 };
const values = (t: Tensor): number[] => Array.from(t.toFloat32Array());

describe("layer-norm kernel vs float64", () => {
  for (const e of [8, 150]) {
    it(`E = ${e}: affine and plain, eps 1e-5 and 1e-2`, async () => {
      const x = randomTensor([2, 3, e], e, 2);
      const w = randomTensor([e], e + 1);
      const b = randomTensor([e], e + 2);
      const affine = await ops.run("layer-norm", { eps: 1e-5 }, [x, w, b], [2, 3, e]);
      expect(compare(affine, layerNorm64(values(x), e, 1e-5, values(w), values(b)), TOL).ok).toBe(true);
      const plain = await ops.run("layer-norm", { eps: 1e-2 }, [x, undefined, undefined], [2, 3, e]);
      expect(compare(plain, layerNorm64(values(x), e, 1e-2), TOL).ok).toBe(true);
      const weightOnly = await ops.run("layer-norm", { eps: 1e-5 }, [x, w, undefined], [2, 3, e]);
      expect(compare(weightOnly, layerNorm64(values(x), e, 1e-5, values(w)), TOL).ok).toBe(true);
    });
  }

  it("x strided on the GPU (normalized axis not stride 1) and offset; weight and bias strided views", async () => {
    const e = 12;
    const x = randomTensor([3, 4, e], 21);
    const w = randomTensor([e], 22);
    const b = randomTensor([e], 23);
    const want = layerNorm64(values(x), e, 1e-5, values(w), values(b));
    const permuted = await ops.permuted(x, [2, 0, 1]);
    expect(permuted.strides[2], "the last axis is strided").not.toBe(1);
    const spaced = await ops.spaced(x);
    expect(spaced.offset).toBe(1);
    for (const input of [permuted, spaced]) {
      const got = await ops.run(
        "layer-norm",
        { eps: 1e-5 },
        [input, await ops.spaced(w), await ops.spaced(b)],
        [3, 4, e],
      );
      const r = compare(got, want, TOL);
      expect({ ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
    }
  });

  it("a constant row gives exactly the bias (or exactly +0 without one), never NaN; a 1e4 offset costs no accuracy", async () => {
    const e = 7;
    const b = randomTensor([e], 31);
    const w = randomTensor([e], 32);
    // 0.1 is not a float: the sum of seven of them rounds, so a mean taken of x would leave deviations of an ulp.
    const rows = [new Array<number>(e).fill(0.1), new Array<number>(e).fill(-3e5), new Array<number>(e).fill(0)];
    const x = Tensor.from(rows.flat(), [rows.length, e]);
    const got = await ops.run("layer-norm", { eps: 1e-5 }, [x, w, b], [rows.length, e]);
    const bias = values(b);
    expect(values(got)).toEqual([...bias, ...bias, ...bias]);
    const plain = await ops.run("layer-norm", { eps: 1e-5 }, [x, w, undefined], [rows.length, e]);
    expect(
      values(plain).every((v) => Object.is(v, 0)),
      "+0 everywhere, not -0 from a negative weight",
    ).toBe(true);

    const offset = Tensor.from(
      Array.from({ length: 2 * e }, (_, i) => 1e4 + (i % 3) * 0.5 + (i >= e ? 0.25 : 0)),
      [2, e],
    );
    const far = await ops.run("layer-norm", { eps: 1e-5 }, [offset, w, b], [2, e]);
    const r = compare(far, layerNorm64(values(offset), e, 1e-5, values(w), values(b)), { abs: 1e-4, rel: 1e-4 });
    expect({ ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
  });

  it("a NaN in a row makes that row NaN and leaves the others alone", async () => {
    const x = Tensor.from([1, Number.NaN, 3, 4, 1, 2, 3, 4], [2, 4]);
    const got = values(await ops.run("layer-norm", { eps: 1e-5 }, [x, undefined, undefined], [2, 4]));
    expect(got.slice(0, 4).every(Number.isNaN)).toBe(true);
    expect(compare(got.slice(4), layerNorm64([1, 2, 3, 4], 4, 1e-5), TOL).ok).toBe(true);
  });

  it("errors name the node and field: weight length, weight rank, eps, int32 x", async () => {
    const x = randomTensor([2, 4], 41);
    await expect(
      ops.error("layer-norm", { eps: 1e-5 }, [x, randomTensor([5], 42), undefined], [2, 4], "blocks.0.ln1"),
    ).resolves.toMatchObject({
      code: "shape",
      subject: "blocks.0.ln1.weight",
    });
    await expect(
      ops.error("layer-norm", { eps: 1e-5 }, [x, undefined, randomTensor([1, 4], 43)], [2, 4], "ln"),
    ).resolves.toMatchObject({ code: "shape", subject: "ln.bias" });
    await expect(ops.error("layer-norm", { eps: 0 }, [x, undefined, undefined], [2, 4], "ln")).resolves.toMatchObject({
      code: "attr",
      subject: "ln.eps",
    });
    await expect(
      ops.error("layer-norm", { eps: 1e-5 }, [Tensor.int32([1, 2], [2]), undefined, undefined], [2], "ln"),
    ).resolves.toMatchObject({
      code: "input",
      subject: "ln.x",
      expected: "float32",
      got: "int32",
    });
  });
});
