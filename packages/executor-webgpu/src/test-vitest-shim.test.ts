// The browser test trusts the shim's verdicts, so the shim itself must be able to fail a test.
import { expect as vitestExpect, it as vitestIt } from "vitest";
import { describe, expect, it, runAll } from "./test-vitest-shim.js";

vitestIt("the vitest shim reports failing assertions and passes good ones", async () => {
  describe("s", () => {
    it("fails", () => expect([1, 2]).toEqual([1, 3]));
    it("passes", () => expect({ a: 1, b: 2 }).toMatchObject({ a: 1 }));
    it("rejects", async () => expect(await Promise.resolve(1), "a message").toBe(2));
    it("skipped", () => expect(1).toBe(2));
  });
  const results = await runAll((name) => (name.endsWith("skipped") ? "not here" : undefined));
  vitestExpect(results.map((r) => [r.name, r.ok, r.skipped ?? false])).toEqual([
    ["s > fails", false, false],
    ["s > passes", true, false],
    ["s > rejects", false, false],
    ["s > skipped", true, true],
  ]);
  vitestExpect(results[2]!.error).toContain("a message");
});
