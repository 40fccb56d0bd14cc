// `pnpm soak`: the long soak, ATTNGRAPH_SOAK_RUNS runs (default 10,000) per executor with taps off and on, printed as
// a table. Exits non-zero when memory grew by more than the bound the test uses.
import { executors } from "./executors.js";
import { soakRuns } from "./settings.js";
import { formatSoakTable, soak, type SoakResult } from "./soak.js";
import { SOAK_GROWTH_BOUND } from "./soak-bound.js";

const runs = soakRuns(10_000);
const results: SoakResult[] = [];
for (const entry of executors) {
  for (const taps of [false, true]) {
    const r = await soak(entry, { runs, taps });
    results.push(r);
    console.error(`${entry.name} taps ${taps ? "on" : "off"}: ${runs} runs in ${(r.ms / 1000).toFixed(1)} s`);
  }
}
console.log(formatSoakTable(results));
const bad = results.filter((r) => r.growth > SOAK_GROWTH_BOUND || (r.executorMemory && r.executorMemory.growth > r.executorMemory.bound));
console.log(`\nbounds: heap + array buffers grow <= ${SOAK_GROWTH_BOUND / 1024 ** 2} MiB after warm-up, executor memory within its entry's bound`);
console.log(`${results.length - bad.length} passed, ${bad.length} failed`);
process.exitCode = bad.length ? 1 : 0;
