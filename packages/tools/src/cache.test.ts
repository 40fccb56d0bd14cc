// runWithCache on the fixture's attention (cpu).
import { describe, expect, it } from "vitest";
import { runWithCache } from "./cache.js";
import { B, H, T, clean, session } from "./test-fixture.js";

describe("runWithCache", () => {
  it("resolves to the outputs and every named node's value; an unknown name is an error before anything runs", async () => {
    const s = await session();
    const { outputs, cache } = await runWithCache(s, { x: clean }, ["weights", "context.heads", "queries"]);
    expect([...cache.keys()].sort()).toEqual(["context.heads", "queries", "weights"]);
    expect(cache.get("weights")!.shape).toEqual([B, H, T, T]);
    expect(Array.from(outputs.output!.toFloat32Array())).toEqual(Array.from((await runWithCache(s, { x: clean }, ["weights"])).outputs.output!.toFloat32Array()));
    await expect(runWithCache(s, { x: clean }, ["nope"])).rejects.toThrow(/nope/);
  });
});

