import type { Executor } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { WeightStore } from "./weights.js";

/** Just enough of an executor to count uploads and releases (the store never dispatches). */
function counting(): Executor & { uploads: number; released: unknown[] } {
  const ex = {
    specVersion: 1 as const,
    name: "counting",
    uploads: 0,
    released: [] as unknown[],
    supports: () => ({ ok: true as const }),
    registerKernel: () => undefined,
    upload: (t: Tensor) => (ex.uploads++, { copyOf: t }),
    download: () => Tensor.zeros([1]),
    dispatch: () => undefined,
    release: (v: unknown) => void ex.released.push(v),
  };
  return ex;
}
const settle = () => new Promise((r) => setTimeout(r, 0));

describe("WeightStore", () => {
  it("copies the weights: changing the caller's tensor afterwards changes nothing", () => {
    const w = Tensor.from([1, 2, 3], [3]);
    const store = new WeightStore(new Map([["w", w]]));
    w.data[0] = 99;
    expect(store.values().get("w")!.toArray()).toEqual([1, 2, 3]);
    // values() hands out copies too.
    store.values().get("w")!.data[1] = 99;
    expect(store.values().get("w")!.toArray()).toEqual([1, 2, 3]);
  });

  it("uploads once per executor and reuses it across runs", async () => {
    const ex = counting();
    const store = new WeightStore(new Map([["w", Tensor.from([1], [1])]]));
    for (let i = 0; i < 3; i++) {
      const lease = store.lease();
      await lease.on("w", ex);
      lease.release();
    }
    expect(ex.uploads).toBe(1);
    expect(ex.released).toEqual([]);
  });

  it("replace(): a run in flight keeps the old value; its upload is released when that run ends, not before", async () => {
    const ex = counting();
    const store = new WeightStore(new Map([["w", Tensor.from([1], [1])]]));
    const running = store.lease();
    const old = await running.on("w", ex);
    store.replace(new Map([["w", Tensor.from([2], [1])]]));
    const next = store.lease();
    expect(((await next.on("w", ex)) as { copyOf: Tensor }).copyOf.toArray()).toEqual([2]);
    expect(((await running.on("w", ex)) as { copyOf: Tensor }).copyOf.toArray()).toEqual([1]);
    await settle();
    expect(ex.released).toEqual([]);
    running.release();
    await settle();
    expect(ex.released).toEqual([old]);
    next.release();
  });

  it("dispose() with a run in flight: an upload the run makes afterwards is released when it ends", async () => {
    const ex = counting();
    const store = new WeightStore(
      new Map([
        ["a", Tensor.from([1], [1])],
        ["b", Tensor.from([2], [1])],
      ]),
    );
    const lease = store.lease();
    const a = await lease.on("a", ex);
    store.dispose();
    const b = await lease.on("b", ex); // the run had not reached the node that reads b yet
    await settle();
    expect(ex.released).toEqual([]);
    lease.release();
    lease.release(); // idempotent
    await settle();
    expect(ex.released).toEqual([a, b]);
  });
});
