// The worst error each executor shows against the float64 reference, relative to the tensor's magnitude
// (|got − ref| / (1 + max|ref|)), over N random cases: the measurement behind the tolerance in check.ts.
//   node packages/reliability/dist/calibrate-main.js            (ATTNGRAPH_FC_SEED, ATTNGRAPH_FC_RUNS: default 2000)
import { referenceAttention } from "@attngraph/testkit";
import fc from "fast-check";
import { attentionCases, describeCase, materialize } from "./cases.js";
import { NAMES, runCase, TOL } from "./check.js";
import { executors } from "./executors.js";
import { fcSettings } from "./settings.js";

const { seed, numRuns } = fcSettings(2000);
const cases = fc.sample(attentionCases(), { seed, numRuns });
for (const entry of executors) {
  const ex = await entry.create();
  const worst = new Map<string, { error: number; at: string }>();
  const t0 = performance.now();
  for (const c of cases) {
    const m = materialize(c);
    const ref = referenceAttention(c.config, m.raw, m.inputs);
    const untapped = await runCase(m, ex, false);
    const tapped = await runCase(m, ex, true);
    const got: [string, Float32Array, Float64Array][] = [
      ["output (fused)", untapped.output.toFloat32Array(), ref.output.data],
      ["output (unfused)", tapped.output.toFloat32Array(), ref.output.data],
      ...NAMES.filter((n) => tapped.taps.has(n)).map((n): [string, Float32Array, Float64Array] => [
        n,
        tapped.taps.get(n)!.toFloat32Array(),
        ref[n].data,
      ]),
    ];
    for (const [name, g, r] of got) {
      let max = 0;
      for (const v of r) max = Math.max(max, Math.abs(v));
      let e = 0;
      for (let i = 0; i < g.length; i++) e = Math.max(e, Math.abs(g[i]! - r[i]!) / (1 + max));
      if (!((worst.get(name)?.error ?? Number.NEGATIVE_INFINITY) >= e))
        worst.set(name, { error: e, at: describeCase(c) });
    }
  }
  console.log(
    `${entry.name}: ${cases.length} cases (seed ${seed}) in ${((performance.now() - t0) / 1000).toFixed(1)} s; tolerance ${TOL}`,
  );
  for (const [name, w] of worst)
    console.log(
      `  ${name.padEnd(17)} ${w.error.toExponential(2)}  (${(TOL / w.error).toFixed(0)}× under tolerance)  ${w.at}`,
    );
}
