// The position-embedding kernels on WebGPU: rows offset..offset+T-1 copied bit for bit (a plain, a transposed and a
// spaced table), T from the ids' last dim with their values never read (no readback), the gradient placed into a zero
// table, a named offset bound per run by the runtime, and positions past the table refused naming the node.
import { afterAll, describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";
import { positionCases, tableRows } from "@attngraph/testkit";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const P = 9;
const E = 5;
const table = randomTensor([P, E], 3);
describe("position-embedding kernel", () => {
  it("copies rows offset..offset+T-1 exactly; ids of any rank, their values never read back", async () => {
    const before = webgpu.stats.readbacks;
    for (const [ids, offset] of positionCases(P)) {
      const t = ids.shape.at(-1)!;
      const got = await ops.run("position-embedding", { offset }, [ids, table], [t, E]);
      expect(got.shape).toEqual([t, E]);
      expect(Array.from(got.toFloat32Array())).toEqual(tableRows(table, offset, t));
    }
    expect(webgpu.stats.readbacks - before, "one download per run, the ids never read").toBe(3);
  });

  it("reads a transposed and a spaced table", async () => {
    for (const view of [await ops.permuted(table, [1, 0]), await ops.spaced(table)]) {
      const strided = view.shape.length === 2 ? view : await ops.dispatch("reshape", { shape: [P, E] }, [view], [P, E]);
      const got = await ops.run(
        "position-embedding",
        { offset: 3 },
        [Tensor.int32([0, 0, 0, 0], [4]), strided],
        [4, E],
      );
      expect(Array.from(got.toFloat32Array())).toEqual(tableRows(table, 3, 4));
    }
  });

  it("the gradient puts grad rows at offset.. of a zero [P, E]", async () => {
    const g = randomTensor([3, E], 4);
    const got = await ops.run("position-embedding-grad", { rows: P, offset: 2 }, [g], [P, E]);
    const want = new Array<number>(P * E).fill(0);
    want.splice(2 * E, 3 * E, ...g.toFloat32Array());
    expect(Array.from(got.toFloat32Array())).toEqual(want);
    const gT = await ops.permuted(g, [1, 0]);
    expect(
      Array.from((await ops.run("position-embedding-grad", { rows: 3, offset: 0 }, [gT], [3, E])).toFloat32Array()),
    ).toEqual(Array.from(g.toFloat32Array()));
  });

  it("positions past the table and an unbound offset are errors naming the node", async () => {
    const e = (await ops.error(
      "position-embedding",
      { offset: 7 },
      [Tensor.int32([0, 0, 0], [3]), table],
      [3, E],
      "wpe",
    )) as AttnGraphError;
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.subject, e.expected, e.got]).toEqual(["wpe.offset", "offset + T <= P = 9", "7 + 3 = 10"]);
    expect(e.message).toContain("positions 7..9 run past the table's P rows (the block size)");
    const g = (await ops.error(
      "position-embedding-grad",
      { rows: 4, offset: 2 },
      [randomTensor([3, E], 1)],
      [4, E],
      "wpe.grad",
    )) as AttnGraphError;
    expect(g.subject).toBe("wpe.grad.offset");
    expect(
      (
        (await ops.error(
          "position-embedding",
          { offset: "N" },
          [Tensor.int32([0], [1]), table],
          [1, E],
          "wpe",
        )) as AttnGraphError
      ).code,
    ).toBe("attr");
  });
});
