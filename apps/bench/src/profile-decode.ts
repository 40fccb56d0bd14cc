// `node apps/bench/dist/profile-decode.js [--executor wasm] [--shape b,T,d,h ...] [--steps N]`: where an attngraph
// decoding step's time goes. The decode rows' runner (impls/attngraph-decode.ts), warmed up, then N steps with
// `decoder.session.events$` subscribed: each node's dispatch time (node-end ms) averaged per step, beside the step's
// wall time and the runtime's own run time (run-end ms), so the runtime's per-step work outside the nodes shows too.
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionEvent } from "@attngraph/runtime";
import { attngraphExecutors } from "./impls/attngraph.js";
import { decodeRunner } from "./impls/attngraph-decode.js";
import { makeDecodeProblem } from "./problem.js";
import { fmtMs } from "./report.js";
import { DEFAULT_DECODE_SHAPES, parseShape, shapeLabel, type BenchShape } from "./shapes.js";

export interface DecodeProfile {
  readonly shape: BenchShape;
  readonly steps: number;
  /** Mean wall time of a step from the host (truncate, step, output read back). */
  readonly wallMs: number;
  /** Mean run-end time the runtime reports (its own work around the nodes included). */
  readonly runMs: number;
  /** Mean dispatch time per step of each node, slowest first. */
  readonly nodes: readonly {
    readonly node: string;
    readonly kind: string;
    readonly executor: string;
    readonly ms: number;
  }[];
}

/** Profiles `steps` decoding steps on executor `name` after `warmup` untimed ones. */
export async function profileDecode(name: string, shape: BenchShape, steps = 50, warmup = 30): Promise<DecodeProfile> {
  const make = attngraphExecutors[name];
  if (!make) throw new Error(`no attngraph executor "${name}"; known: ${Object.keys(attngraphExecutors).join(", ")}`);
  const runner = await decodeRunner(await make({ threads: 1 }), makeDecodeProblem(shape), 1);
  try {
    for (let i = 0; i < warmup; i++) await runner.run();
    const nodes = new Map<string, { node: string; kind: string; executor: string; ms: number }>();
    let runMs = 0;
    const sub = runner.decoder.session.events$.subscribe((e: SessionEvent) => {
      if (e.type === "run-end") runMs += e.ms;
      if (e.type !== "node-end") return;
      const n = nodes.get(e.node) ?? { node: e.node, kind: e.kind, executor: e.executor, ms: 0 };
      n.ms += e.ms;
      nodes.set(e.node, n);
    });
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await runner.run();
    const wallMs = (performance.now() - t0) / steps;
    sub.unsubscribe();
    const perStep = [...nodes.values()].map((n) => ({ ...n, ms: n.ms / steps })).sort((a, b) => b.ms - a.ms);
    return { shape, steps, wallMs, runMs: runMs / steps, nodes: perStep };
  } finally {
    await runner.dispose();
  }
}

/** The profile as lines: the step's times, then one line per node with its share of the run. */
export function formatProfile(name: string, p: DecodeProfile): string[] {
  const sum = p.nodes.reduce((a, n) => a + n.ms, 0);
  return [
    `${name} ${shapeLabel(p.shape)}: step ${fmtMs(p.wallMs)} ms wall, ${fmtMs(p.runMs)} ms run-end, nodes ${fmtMs(sum)} ms (mean of ${p.steps} steps)`,
    ...p.nodes.map(
      (n) =>
        `  ${fmtMs(n.ms).padStart(7)} ms  ${((100 * n.ms) / p.runMs).toFixed(1).padStart(5)} %  ${n.node} (${n.kind})`,
    ),
  ];
}

async function main(argv: readonly string[]): Promise<void> {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: { executor: { type: "string" }, shape: { type: "string", multiple: true }, steps: { type: "string" } },
  });
  const shapes = values.shape ? values.shape.map(parseShape) : DEFAULT_DECODE_SHAPES;
  const name = values.executor ?? "wasm";
  for (const shape of shapes)
    for (const line of formatProfile(name, await profileDecode(name, shape, Number(values.steps ?? 50))))
      console.log(line);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
