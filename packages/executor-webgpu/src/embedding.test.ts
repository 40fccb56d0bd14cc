// The embedding kernel: rows picked exactly (a copy, so bit for bit), ids of any rank including strided int32 views
// and a transposed table; ids outside [0, V) are errors naming the node, the position and the id, checked on the host
// from the upload (no readback) or read back once for a view; dtypes are checked both ways.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

/** out[..., :] = table[id, :], in float64 of the float32 table (exact: nothing is computed). */
function embedding64(ids: readonly number[], table: Tensor): number[] {
  const [, e] = table.shape as [number, number];
  const t = Array.from(table.toFloat32Array());
  return ids.flatMap((id) => t.slice(id * e, id * e + e));
}

describe("embedding kernel", () => {
  const V = 7;
  const E = 5;
  const table = randomTensor([V, E], 1);

  it("ids [B, T], [N] and [] pick rows; repeated ids; the first and last row", async () => {
    for (const [ids, shape] of [
      [
        [6, 0, 3, 3, 1, 6],
        [2, 3],
      ],
      [[0, 6, 2], [3]],
      [[4], []],
    ] as const) {
      const got = await ops.run("embedding", {}, [Tensor.int32(ids, shape), table], [...shape, E]);
      expect(got.shape).toEqual([...shape, E]);
      expect(Array.from(got.toFloat32Array())).toEqual(embedding64(ids, table));
    }
  });

  it("strided and offset int32 ids, and a table read through transposed strides", async () => {
    const ids = Tensor.int32([1, 5, 2, 6, 0, 4], [2, 3]);
    const want = embedding64([1, 5, 2, 6, 0, 4], table);
    const transposedIds = await ops.permuted(ids, [1, 0]);
    expect(transposedIds.dtype).toBe("int32");
    const tableT = await ops.permuted(table, [1, 0]);
    expect(tableT.strides).toEqual([1, V]);
    for (const input of [transposedIds, await ops.spaced(ids)]) {
      const got = await ops.run("embedding", {}, [input, tableT], [2, 3, E]);
      expect(Array.from(got.toFloat32Array())).toEqual(want);
    }
  });

  it("an id of V or -1 is an error naming node, position and id; an uploaded ids tensor is checked without a readback", async () => {
    for (const [bad, where] of [
      [V, "[1, 0]"],
      [-1, "[1, 0]"],
      [2 ** 31 - 1, "[1, 0]"],
    ] as const) {
      const ids = await webgpu.upload(Tensor.int32([0, 1, 2, bad, 0, 0], [2, 3]));
      const before = webgpu.stats.readbacks;
      const e = await ops.error("embedding", {}, [ids, table], [2, 3, E], "wte");
      expect(e).toMatchObject({
        code: "input",
        subject: "wte.ids",
        got: `${bad} at ${where}`,
        expected: `token id in [0, ${V})`,
      });
      expect((e as Error).message).toContain("wte.ids");
      expect(webgpu.stats.readbacks - before, "no readback for an upload").toBe(0);
    }
  });

  it("a bad id in a strided view is found at its position in the view (read back once)", async () => {
    // Logical ids [[0, 1], [2, 9], [3, 4]]: stored transposed, so the bad id's position must come from the view.
    const view = await ops.permuted(Tensor.int32([0, 1, 2, 9, 3, 4], [3, 2]), [1, 0]);
    const before = webgpu.stats.readbacks;
    await expect(ops.error("embedding", {}, [view, table], [3, 2, E], "wte")).resolves.toMatchObject({
      subject: "wte.ids",
      got: "9 at [1, 1]",
    });
    expect(webgpu.stats.readbacks - before).toBe(1);
  });

  it("dtypes: float32 ids and an int32 table are errors naming the slot", async () => {
    await expect(ops.error("embedding", {}, [Tensor.from([0, 1], [2]), table], [2, E], "wte")).resolves.toMatchObject({
      code: "input",
      subject: "wte.ids",
      expected: "int32",
      got: "float32",
    });
    await expect(
      ops.error("embedding", {}, [Tensor.int32([0], [1]), Tensor.int32([1, 2], [1, 2])], [1, 2], "wte"),
    ).resolves.toMatchObject({
      code: "input",
      subject: "wte.weight",
      expected: "float32",
      got: "int32",
    });
    await expect(
      ops.error("embedding", {}, [Tensor.int32([0], [1]), randomTensor([5], 3)], [1, 5], "wte"),
    ).resolves.toMatchObject({ code: "shape", subject: "wte.weight" });
  });
});
