// Short soak (ATTNGRAPH_SOAK_RUNS, default 300 runs per executor and tap mode): memory after warm-up stays within
// SOAK_GROWTH_BOUND. `pnpm soak` runs the long version (10,000 runs) and prints a table.
import type { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { executors } from "./executors.js";
import { soakRuns } from "./settings.js";
import { formatSoakTable, soak } from "./soak.js";
import { SOAK_GROWTH_BOUND } from "./soak-bound.js";

const runs = soakRuns(300);

describe.each(executors.map((e) => [e.name, e] as const))("%s: soak", (_name, entry) => {
  it.each([false, true])(`${runs} runs, taps %s: memory after warm-up grows by less than the bound`, async (taps) => {
    const r = await soak(entry, { runs, taps });
    console.log(formatSoakTable([r]));
    expect(r.growth).toBeLessThan(SOAK_GROWTH_BOUND);
    if (r.executorMemory)
      expect(r.executorMemory.growth, r.executorMemory.unit).toBeLessThanOrEqual(r.executorMemory.bound);
    expect(r.tapEvents).toBe(taps ? 3 * runs : 0);
  });
});

describe("the soak can fail", () => {
  it("a subscriber that keeps every tapped tensor (a leak of ~40 KiB per run) exceeds the bound", async () => {
    const kept: Tensor[] = [];
    const r = await soak(executors[0]!, { runs: 300, taps: true, onTap: (t) => kept.push(t) });
    expect(kept.length).toBe(900);
    expect(r.growth).toBeGreaterThan(SOAK_GROWTH_BOUND);
  });
});
