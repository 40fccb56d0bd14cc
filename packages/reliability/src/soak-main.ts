// `pnpm soak`: the long soak, ATTNGRAPH_SOAK_RUNS runs (default 10,000) per executor with taps off and on, then the
// lifecycle soaks (shape-soak.ts: 40 shapes × 40 in flight × ATTNGRAPH_SOAK_ROUNDS rounds, default 50; dispose() mid-run
// ATTNGRAPH_SOAK_DISPOSALS times, default 100), printed as tables. Exits non-zero when memory grew by more than the
// bounds the tests use. ATTNGRAPH_SOAK_EXECUTORS (a comma list, e.g. "webgpu") limits it to some executors.
import { executors } from "./executors.js";
import { soakRuns } from "./settings.js";
import {
  disposeMidRunSoak,
  formatDisposeSoakTable,
  formatShapeSoakTable,
  shapeSoak,
  type DisposeSoakResult,
  type ShapeSoakResult,
} from "./shape-soak.js";
import { formatSoakTable, soak, type SoakResult } from "./soak.js";
import { SOAK_GROWTH_BOUND } from "./soak-bound.js";

const runs = soakRuns(10_000);
const rounds = Number(process.env["ATTNGRAPH_SOAK_ROUNDS"] || 50);
const disposals = Number(process.env["ATTNGRAPH_SOAK_DISPOSALS"] || 100);
const results: SoakResult[] = [];
const only = process.env["ATTNGRAPH_SOAK_EXECUTORS"]
  ?.split(",")
  .map((n) => n.trim())
  .filter(Boolean);
const unknown = only?.filter((n) => !executors.some((e) => e.name === n)) ?? [];
if (unknown.length)
  throw new Error(
    `ATTNGRAPH_SOAK_EXECUTORS: unknown executor ${unknown.join(", ")}; known: ${executors.map((e) => e.name).join(", ")}`,
  );
const chosen = executors.filter((e) => !only || only.includes(e.name));
for (const entry of chosen) {
  for (const taps of [false, true]) {
    const r = await soak(entry, { runs, taps });
    results.push(r);
    console.error(`${entry.name} taps ${taps ? "on" : "off"}: ${runs} runs in ${(r.ms / 1000).toFixed(1)} s`);
  }
}
const shapes: ShapeSoakResult[] = [];
const disposed: DisposeSoakResult[] = [];
for (const entry of chosen.filter((e) => e.live)) {
  shapes.push(await shapeSoak(entry, { shapes: 40, inFlight: 40, rounds }));
  disposed.push(await disposeMidRunSoak(entry, { times: disposals, inFlight: 6 }));
  console.error(`${entry.name}: shape soak and ${disposals} disposals done`);
}
console.log(formatSoakTable(results));
console.log(`\n${formatShapeSoakTable(shapes)}`);
console.log(`\n${formatDisposeSoakTable(disposed)}`);
const bad = [
  ...results.filter(
    (r) => r.growth > SOAK_GROWTH_BOUND || (r.executorMemory && r.executorMemory.growth > r.executorMemory.bound),
  ),
  ...shapes.filter(
    (r) => r.final !== r.warm || r.disposed !== r.before || (r.reserved && r.reserved.final !== r.reserved.warm),
  ),
  ...disposed.filter((r) => r.after !== r.before || r.otherErrors.length > 0),
];
const total = results.length + shapes.length + disposed.length;
console.log(
  `\nbounds: heap + array buffers grow <= ${SOAK_GROWTH_BOUND / 1024 ** 2} MiB after warm-up, executor memory within its entry's bound;`,
);
console.log("shape and dispose soaks: live executor memory back to exactly where it was");
console.log(`${total - bad.length} passed, ${bad.length} failed`);
process.exitCode = bad.length ? 1 : 0;
