// Zero and mean head ablation on the fixture's attention (cpu), zero against the float64 reference without the head.
import { OverrideError } from "@attngraph/runtime";
import { describe, expect, it } from "vitest";
import { GraphValidationError } from "@attngraph/graph";
import { ablateHeads } from "./ablate.js";
import { headsAxis } from "./heads-axis.js";
import { runWithCache } from "./cache.js";
import { B, D, E, H, T, clean, referenceWithout, session } from "./test-fixture.js";

describe("ablateHeads", () => {
  it("zero-ablating head 1 of `weights` gives the float64 output without head 1; removing the patch restores the run", async () => {
    const s = await session();
    const before = (await s.run({ x: clean })).output!;
    const remove = ablateHeads(s, "weights", [1]);
    const out = (await s.run({ x: clean })).output!.toFloat32Array();
    const want = referenceWithout(1);
    want.forEach((w, i) => expect(Math.abs(out[i]! - w), `output[${i}]`).toBeLessThan(1e-5 * (1 + Math.abs(w))));
    remove();
    expect(Array.from((await s.run({ x: clean })).output!.toFloat32Array())).toEqual(
      Array.from(before.toFloat32Array()),
    );
  });

  it("mean ablation puts each ablated head's batch mean in every batch entry and leaves the other heads alone", async () => {
    const s = await session();
    const plain = (await runWithCache(s, { x: clean }, ["context.heads"])).cache.get("context.heads")!.toFloat32Array();
    const remove = ablateHeads(s, "context.heads", [0, 2], "mean");
    const got = (await runWithCache(s, { x: clean }, ["context.heads"])).cache.get("context.heads")!.toFloat32Array();
    remove();
    const per = T * D;
    for (let h = 0; h < H; h++)
      for (let i = 0; i < per; i++) {
        const at = (b: number) => (b * H + h) * per + i;
        const mean = (plain[at(0)]! + plain[at(1)]!) / 2;
        for (let b = 0; b < B; b++) expect(got[at(b)]).toBeCloseTo(h === 1 ? plain[at(b)]! : mean, 6);
      }
  });

  it("a head index outside the value's heads fails the run with an OverrideError naming the node", async () => {
    const s = await session();
    const remove = ablateHeads(s, "weights", [3]);
    await expect(s.run({ x: clean })).rejects.toThrow(OverrideError);
    await expect(s.run({ x: clean })).rejects.toThrow(/override of node weights: .*weights head/);
    remove();
    expect((await s.run({ x: clean })).output!.shape).toEqual([B, T, E]);
    expect(() => ablateHeads(s, "weights", [0], "max" as never)).toThrow(GraphValidationError);
    expect(() => ablateHeads(s, "weights", [0], "bogus" as never)).toThrow(
      /ablateHeads mode: unknown ablation mode, expected "zero" or "mean", got bogus/,
    );
    expect(() => ablateHeads(s, "weights", null as never)).toThrow(/ablateHeads heads: invalid head list/);
    expect(() => ablateHeads(s, "weights", [0.5])).toThrow(/ablateHeads heads: invalid head list/);
  });

  it("a value without a heads axis ([B, T, E]) is refused when the patch is made, not read with T as its heads", async () => {
    const s = await session();
    const before = (await s.run({ x: clean })).output!.toArray();
    for (const node of ["output", "context", "queries"]) {
      expect(() => ablateHeads(s, node, [0]), node).toThrow(GraphValidationError);
      expect(() => ablateHeads(s, node, [0]), node).toThrow(
        new RegExp(`ablateHeads ${node}: the value has no heads axis`),
      );
    }
    expect(() => ablateHeads(s, "nope", [0])).toThrow(/ablateHeads nope: no node of this name/);
    // Nothing was patched: the session runs as before.
    expect((await s.run({ x: clean })).output!.toArray()).toEqual(before);
  });

  it("heads found through the graph: q.split [B, T, H, D] keeps them on axis 2, and ablating there equals ablating q.heads", async () => {
    const s = await session();
    expect(headsAxis(s.graph, "q.split")).toBe(2);
    expect(headsAxis(s.graph, "context.merge")).toBe(2);
    expect(headsAxis(s.graph, "scores")).toBe(1);
    expect(headsAxis(s.graph, "output")).toBeUndefined();
    for (const mode of ["zero", "mean"] as const) {
      const undo = ablateHeads(s, "q.heads", [1], mode);
      const want = (await s.run({ x: clean })).output!.toArray();
      undo();
      const undoSplit = ablateHeads(s, "q.split", [1], mode);
      const got = (await s.run({ x: clean })).output!.toArray();
      undoSplit();
      expect(got, mode).toEqual(want);
    }
  });
});
