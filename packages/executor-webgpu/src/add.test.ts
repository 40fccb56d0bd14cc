// The add kernel against float64 broadcasting: one float32 addition per element is correctly rounded, so the result
// must equal fround(a + b) exactly. Residuals, pos_embed [1, T, E] over x [B, T, E], a bias [E], both sides stretching,
// rank 0, strided and offset GPU views on either side, and the shape errors.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, type Input, values } from "./test-gpu.js";
import { add64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

async function expectAdd(a: Tensor, b: Tensor, out: number[], inputs: [Input, Input] = [a, b]): Promise<void> {
  const got = await ops.run("add", {}, inputs, out);
  expect(got.shape).toEqual(out);
  const want = add64(values(a), a.shape, values(b), b.shape, out).map(Math.fround);
  expect(values(got)).toEqual(want);
}

describe("add kernel vs float64", () => {
  const cases: [string, number[], number[], number[]][] = [
    ["a residual: same shapes", [2, 3, 5], [2, 3, 5], [2, 3, 5]],
    ["pos_embed [1, T, E] + x [B, T, E]", [1, 4, 6], [3, 4, 6], [3, 4, 6]],
    ["x [B, T, E] + a bias [E]", [3, 4, 6], [6], [3, 4, 6]],
    ["both stretch: [2, 1, 4] + [3, 1]", [2, 1, 4], [3, 1], [2, 3, 4]],
    ["a scalar: [] + [3]", [], [3], [3]],
    ["two scalars", [], [], []],
    ["b has more axes: [4] + [2, 1, 4]", [4], [2, 1, 4], [2, 1, 4]],
  ];
  for (const [label, as, bs, out] of cases) {
    it(label, async () => {
      await expectAdd(randomTensor(as, as.length * 10 + 1), randomTensor(bs, bs.length * 10 + 2), out);
    });
  }

  it("strided and offset views on the GPU, on either side of the broadcast", async () => {
    const x = randomTensor([3, 4, 6], 11);
    const pos = randomTensor([1, 4, 6], 12);
    const bias = randomTensor([6], 13);
    await expectAdd(x, pos, [3, 4, 6], [await ops.permuted(x, [2, 0, 1]), await ops.spaced(pos)]);
    await expectAdd(pos, x, [3, 4, 6], [await ops.permuted(pos, [1, 2, 0]), await ops.spaced(x)]);
    await expectAdd(x, bias, [3, 4, 6], [await ops.spaced(x), await ops.spaced(bias)]);
  });

  it("infinities and NaN follow IEEE: inf + -inf is NaN", async () => {
    const a = Tensor.from([Infinity, -Infinity, Number.NaN, 1], [4]);
    const b = Tensor.from([-Infinity, -Infinity, 1, Infinity], [4]);
    const got = values(await ops.run("add", {}, [a, b], [4]));
    expect(got.map(String)).toEqual(["NaN", "-Infinity", "NaN", "Infinity"]);
  });

  it("errors: shapes that do not broadcast name <node>.b; an outShape that is not the broadcast shape names <node>.out; int32 names the slot", async () => {
    const a = randomTensor([2, 3], 21);
    await expect(ops.error("add", {}, [a, randomTensor([2], 22)], [2, 3], "blocks.1.residual")).resolves.toMatchObject({
      code: "shape",
      subject: "blocks.1.residual.b",
    });
    await expect(ops.error("add", {}, [a, randomTensor([3], 23)], [1, 2, 3], "res")).resolves.toMatchObject({
      code: "shape",
      subject: "res.outShape",
    });
    await expect(ops.error("add", {}, [a, Tensor.int32([1, 2, 3], [3])], [2, 3], "res")).resolves.toMatchObject({
      code: "input",
      subject: "res.b",
      expected: "float32",
      got: "int32",
    });
  });
});
