// kv-append on every executor, through upload/dispatch/download only: two appends into one cache value (the second
// run passes the same value again, as a decode session does) give the concatenation, positions past past + L never
// written; with shift, the kept positions move to the front first (a window's ring); bad calls are typed errors
// naming the node and field, and a refused call writes nothing. What only one executor has (where the view lives,
// its write paths, a trap or a device loss) stays in that executor's kv-append test.
import type { Executor } from "@attngraph/graph";
import { AttnGraphError, ShapeError, type Tensor } from "@attngraph/tensor";
import { KV_SENTINEL, kvAppendCall, kvConcat, randomTensor, sentinelTensor } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { executors } from "./executors.js";

const [B, H, M, D] = [2, 3, 6, 4];

type Value = { readonly shape: readonly number[] };

/** Runs `fn` and returns what it threw or rejected with; undefined if it returned. */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe.each(executors.map((e) => [e.name, e] as const))("%s: kv-append", (_name, entry) => {
  const use = async () => {
    // Every executor's values have a shape, which is all kvAppendCall reads of them.
    const ex = (await entry.create()) as Executor<Value>;
    await ex.init?.();
    const upload = async (t: Tensor) => ex.upload(t);
    const values = async (v: Value) => Array.from((await ex.download(v)).contiguous().toFloat32Array());
    const append = async (cache: Value, x: Value, past: unknown, node?: string) =>
      ex.dispatch(kvAppendCall(cache, x, past, node));
    return { ex, upload, values, append };
  };

  it("two appends into one cache give the concatenation; later positions untouched", async () => {
    const { ex, upload, values, append } = await use();
    const cache = await upload(sentinelTensor([B, H, M, D]));
    // First call (a prefill): L = 3, x heads split from [B, L, H, D], so its strides are not row-major.
    const x1 = randomTensor([B, H, 3, D], 1);
    const stored = await upload(x1.permute([0, 2, 1, 3]).contiguous());
    const v1 = await ex.dispatch({
      kind: "transpose",
      node: "split",
      attrs: { perm: [0, 2, 1, 3] },
      inputs: [stored],
      outShape: [B, H, 3, D],
    });
    const y1 = await append(cache, v1, 0);
    expect((await ex.download(y1)).shape).toEqual([B, H, 3, D]);
    expect(await values(y1)).toEqual(Array.from(x1.toFloat32Array()));
    // Second call (a decode step of 2 tokens), the same cache value again: x dense.
    const x2 = randomTensor([B, H, 2, D], 2);
    const y2 = await append(cache, await upload(x2), 3);
    expect((await ex.download(y2)).shape).toEqual([B, H, 5, D]);
    expect(await values(y2)).toEqual(kvConcat(x1, x2));
    expect(await values(cache)).toEqual(kvConcat(x1, x2, M - 5)); // position 5 was never written
    await ex.dispose?.();
  });

  it("with shift, positions [shift, shift + past) move to the front first, then x follows them", async () => {
    const { ex, upload } = await use();
    const host = randomTensor([B, H, M, D], 11);
    const x = randomTensor([B, H, 1, D], 12);
    const y = await ex.dispatch({
      kind: "kv-append",
      node: "k.cache",
      attrs: { past: 2, shift: 3, length: "S" },
      inputs: [await upload(host), await upload(x)],
      outShape: [B, H, 3, D],
    });
    const got = (await ex.download(y)).contiguous();
    for (let i = 0; i < B; i++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < D; d++)
          expect([got.get(i, h, 0, d), got.get(i, h, 1, d), got.get(i, h, 2, d)]).toEqual([
            host.get(i, h, 3, d),
            host.get(i, h, 4, d),
            x.get(i, h, 0, d),
          ]);
    await ex.dispose?.();
  });

  it("bad calls are typed errors naming <node>.<field>, and write nothing", async () => {
    const { ex, upload, values, append } = await use();
    const cache = await upload(sentinelTensor([B, H, M, D]));
    const cases: [number[], unknown, string, string][] = [
      [[B, H, 2, D], 5, "attr", "past"], // past + L = 7 > M = 6
      [[B, H, 1, D], 1.5, "attr", "past"],
      [[B, H, 1, D], "P", "attr", "past"], // an unbound dim name
      [[B, H, 1, D], -1, "attr", "past"],
      [[B, H + 1, 1, D], 0, "shape", "x"],
      [[B, H, 1, D + 1], 0, "shape", "x"],
      [[B, 1, D], 0, "shape", "x"],
    ];
    for (const [shape, past, code, field] of cases) {
      const vx = await upload(randomTensor(shape, 7));
      const e = (await thrown(() => append(cache, vx, past, "dec.k"))) as AttnGraphError;
      expect(AttnGraphError.isInstance(e), `${String(shape)} past ${String(past)}: ${String(e)}`).toBe(true);
      expect([e.code, e.subject]).toEqual([code, `dec.k.${field}`]);
      if (code === "shape") expect(e).toBeInstanceOf(ShapeError);
    }
    // x a view of the cache itself: read from the cache's own memory, it could be overwritten before it is read.
    const self = await ex.dispatch({
      kind: "slice",
      node: "s",
      attrs: { axis: 2, start: 0, size: 1 },
      inputs: [cache],
      outShape: [B, H, 1, D],
    });
    const e = (await thrown(() => append(cache, self, 1, "dec.k"))) as AttnGraphError;
    expect([e.code, e.subject]).toEqual(["input", "dec.k.x"]);
    expect((await values(cache)).every((v) => v === KV_SENTINEL)).toBe(true); // nothing was written by a refused call
    await ex.dispose?.();
  });
});
