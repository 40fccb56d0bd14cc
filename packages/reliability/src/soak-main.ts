// `pnpm soak`: the long soak, ATTNGRAPH_SOAK_RUNS runs (default 10,000) per executor with taps off and on, printed as
// a table. Exits non-zero when memory grew by more than the bound the test uses. ATTNGRAPH_SOAK_EXECUTORS (a comma
// list, e.g. "webgpu") limits it to some executors.
import { executors } from "./executors.js";
import { soakRuns } from "./settings.js";
import { formatSoakTable, soak, type SoakResult } from "./soak.js";
import { SOAK_GROWTH_BOUND } from "./soak-bound.js";

const runs = soakRuns(10_000);
const results: SoakResult[] = [];
const only = process.env["ATTNGRAPH_SOAK_EXECUTORS"]?.split(",").map((n) => n.trim()).filter(Boolean);
const unknown = only?.filter((n) => !executors.some((e) => e.name === n)) ?? [];
if (unknown.length) throw new Error(`ATTNGRAPH_SOAK_EXECUTORS: unknown executor ${unknown.join(", ")}; known: ${executors.map((e) => e.name).join(", ")}`);
for (const entry of executors.filter((e) => !only || only.includes(e.name))) {
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
