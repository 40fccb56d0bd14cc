import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { Executor } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { downloadOwned } from "./download-owned.js";

/** An executor whose values are host tensors and whose download is `download` (the rest is never called here). */
function host(download: (t: Tensor) => Tensor, downloadsCopy?: boolean): Executor {
  return { download, ...(downloadsCopy === undefined ? {} : { downloadsCopy }) } as unknown as Executor;
}

describe("downloadOwned", () => {
  const dense = new Tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);

  it("hands a dense download over as it is when the executor says its downloads are fresh copies", async () => {
    const fresh = host((t) => new Tensor(t.data.slice(), t.shape), true);
    const out = await downloadOwned(fresh, dense);
    expect(out.data).not.toBe(dense.data);
    expect(await downloadOwned(fresh, out)).not.toBe(out); // the download's own copy, not a second one of it
    const passthrough = host((t) => t, true);
    expect(await downloadOwned(passthrough, dense)).toBe(dense); // what it declares is taken at its word
  });

  it("copies a download that is not dense, even from such an executor, into a dense tensor", async () => {
    const span = new Tensor(new Float32Array([9, 1, 2, 3, 4, 5, 6]), [3, 2], [1, 3], 1); // a transposed view, offset 1
    const out = await downloadOwned(
      host(() => span, true),
      dense,
    );
    expect(out).not.toBe(span);
    expect(out.offset).toBe(0);
    expect([...out.data]).toEqual([1, 4, 2, 5, 3, 6]);
    const padded = new Tensor(new Float32Array([1, 2, 3, 4, 5, 6, 7]), [2, 3]); // dense, but its buffer is longer
    expect(
      (
        await downloadOwned(
          host(() => padded, true),
          dense,
        )
      ).data.length,
    ).toBe(6);
  });

  it("copies every download of an executor that does not declare it (cpu: the download is the value itself)", async () => {
    const cpu = createCpuExecutor();
    expect((cpu as Executor).downloadsCopy).toBeUndefined();
    const out = await downloadOwned(cpu as Executor, dense);
    expect(out).not.toBe(dense);
    expect(out.data).not.toBe(dense.data);
    expect([...out.data]).toEqual([...dense.data]);
    expect(
      await downloadOwned(
        host((t) => t, false),
        dense,
      ),
    ).not.toBe(dense);
  });
});
