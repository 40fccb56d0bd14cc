// The pointwise kernel on the device (a shader generated per expression), through relu's expression: max(x, 0)
// exactly, with the special values decided on their bits (NaN kept as torch.relu keeps it, +∞ kept, −∞ and −0 → +0),
// strided and offset inputs, a size past one workgroup, several inputs, and the errors.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { reluOp } from "@attngraph/graph";
import { WHERE3_EXPR, where3 } from "@attngraph/testkit";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
/** relu as the scheduler lowers it: the pointwise kernel with relu's expression over x0. */
const RELU = { expr: reluOp.pointwise!({}) };
afterAll(() => webgpu.dispose());

/** torch.relu in float64 (Math.max keeps NaN; −0 gives +0), as float32 values. */
const relu64 = (t: Tensor): number[] => Array.from(t.toFloat32Array(), (v) => Math.fround(Math.max(v, 0)));

/** Exact equality with NaN equal to NaN and +0 told from −0. */
function expectSame(got: Tensor, want: readonly number[], label: string): void {
  const g = Array.from(got.toFloat32Array());
  const bad = g.findIndex((v, k) => !Object.is(v, want[k]));
  expect(bad, bad < 0 ? label : `${label}: at ${bad} got ${g[bad]}, expected ${want[bad]}`).toBe(-1);
}

describe("pointwise kernel (relu's expression)", () => {
  it("extremes, exactly: NaN and +∞ kept, −∞, −0 and negatives give +0", async () => {
    const x = Tensor.from([-2, -0, 0, 1e-30, -1e-30, 3.5, NaN, Infinity, -Infinity, 3e38, -3e38], [11]);
    expectSame(await ops.run("pointwise", RELU, [x], x.shape), relu64(x), "extremes");
  });

  it("a strided input, an offset one with NaN between its elements, and 1000 elements (many workgroups)", async () => {
    const x = randomTensor([5, 6], 7, 4);
    for (const input of [await ops.permuted(x, [1, 0]), await ops.spaced(x)])
      expectSame(await ops.run("pointwise", RELU, [input], [5, 6]), relu64(x), "strided");
    const big = randomTensor([1000], 8, 3);
    expectSame(await ops.run("pointwise", RELU, [big], [1000]), relu64(big), "1000 elements");
  });

  it("errors: an int32 x", async () => {
    await expect(ops.error("pointwise", RELU, [Tensor.int32([1], [1])], [1], "mlp.act")).resolves.toMatchObject({
      code: "input",
      subject: "mlp.act.x0",
      expected: "float32",
      got: "int32",
    });
  });

  it("three inputs with a where; inputs of different shapes are a shape error naming the slot", async () => {
    const expr = WHERE3_EXPR;
    const [a, b, c] = [randomTensor([300], 1, 2), randomTensor([300], 2, 2), randomTensor([300], 3, 2)];
    const want = Array.from(where3(a.toFloat32Array(), b.toFloat32Array(), c.toFloat32Array()));
    expectSame(await ops.run("pointwise", { expr }, [a, await ops.spaced(b), c], [300]), want, "three inputs");
    await expect(
      ops.error("pointwise", { expr }, [a, randomTensor([299], 4), c], [300], "user"),
    ).resolves.toMatchObject({ code: "shape", subject: "user.x1" });
  });
});
