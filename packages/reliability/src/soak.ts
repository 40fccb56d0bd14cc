// The soak: many runs on one session, with taps on or off, four in flight at a time and four input shapes in turn,
// measuring what stays allocated after a full GC (heap, array buffers, and the executor's own memory where it has
// some). Memory must stay flat after warm-up. Used by soak.test.ts (short) and soak-main.ts (`pnpm soak`, long).
import { normalizeConfig } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { materialize } from "./cases.js";
import type { ExecutorEntry } from "./executors.js";
import { table } from "./table.js";

export interface SoakOptions {
  readonly runs: number;
  readonly taps: boolean;
  /** Runs before the baseline reading (arenas, plans and JIT settle). Default: 100 or a fifth of the runs. */
  readonly warmup?: number;
  /** Called with every tapped event; the leak check plants a subscriber that keeps them. */
  readonly onTap?: (tensor: Tensor) => void;
}

export interface SoakResult {
  readonly executor: string;
  readonly taps: boolean;
  readonly runs: number;
  readonly ms: number;
  /** Bytes retained after warm-up and after the last run (heap + array buffers), after a full GC. */
  readonly baseline: number;
  readonly final: number;
  readonly growth: number;
  /** The executor's own memory (ExecutorEntry.memory) after warm-up and at the end, in its unit. */
  readonly executorMemory?: {
    readonly unit: string;
    readonly baseline: number;
    readonly final: number;
    readonly growth: number;
    readonly bound: number;
  };
  readonly tapEvents: number;
}

const SHAPES = [8, 16, 24, 32];
const IN_FLIGHT = 4;

/** A full collection: global.gc when node runs with --expose-gc, else switched on through v8 for this process. */
export function fullGc(): void {
  const g = globalThis as { gc?: () => void };
  if (!g.gc) {
    setFlagsFromString("--expose-gc");
    g.gc = runInNewContext("gc") as () => void;
  }
  g.gc!();
  g.gc!();
}

export async function soak(entry: ExecutorEntry, options: SoakOptions): Promise<SoakResult> {
  const config = normalizeConfig({ dIn: 32, dOut: 32, numHeads: 4, numKvHeads: 2, causal: true, qkvBias: true });
  const base = materialize({ config, fusedQkv: false, B: 2, T: 8, S: 8, padding: true, magnitude: 1, seed: 1 });
  const inputs = SHAPES.map(
    (T, i) => materialize({ config, fusedQkv: false, B: 2, T, S: T, padding: true, magnitude: 1, seed: 10 + i }).inputs,
  );
  const executor = await entry.create();
  const session = await compile(base.graph, { executors: [executor], weights: base.weights });
  let tapEvents = 0;
  const sub = options.taps
    ? session.tap(["scores", "weights", "context"]).subscribe((e) => {
        tapEvents++;
        options.onTap?.(e.tensor);
      })
    : undefined;
  const measure = () => {
    fullGc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const own = () => entry.memory?.read(executor) ?? 0;
  const warmup = Math.min(options.warmup ?? Math.min(100, Math.floor(options.runs / 5)), options.runs);
  let done = 0;
  const batch = async (n: number) => {
    while (n > 0) {
      const k = Math.min(IN_FLIGHT, n);
      await Promise.all(Array.from({ length: k }, (_, i) => session.run(inputs[(done + i) % inputs.length]!)));
      done += k;
      n -= k;
    }
  };
  await batch(warmup);
  const baseline = measure();
  const ownBaseline = own();
  const t0 = performance.now();
  await batch(options.runs - warmup);
  const ms = performance.now() - t0;
  const final = measure();
  const ownFinal = own();
  sub?.unsubscribe();
  await session.dispose();
  const executorMemory = entry.memory
    ? {
        unit: entry.memory.unit,
        baseline: ownBaseline,
        final: ownFinal,
        growth: ownFinal - ownBaseline,
        bound: entry.memory.bound,
      }
    : undefined;
  return {
    executor: entry.name,
    taps: options.taps,
    runs: options.runs,
    ms,
    baseline,
    final,
    growth: final - baseline,
    tapEvents,
    ...(executorMemory ? { executorMemory } : {}),
  };
}

export function formatSoakTable(results: readonly SoakResult[]): string {
  const mib = (n: number) => (n / 1024 ** 2).toFixed(2);
  const own = (r: SoakResult) =>
    r.executorMemory ? `${r.executorMemory.baseline} → ${r.executorMemory.final} ${r.executorMemory.unit}` : "-";
  const rows = results.map((r) => [
    r.executor,
    r.taps ? "on" : "off",
    String(r.runs),
    (r.ms / 1000).toFixed(1),
    ((r.runs / r.ms) * 1000).toFixed(0),
    mib(r.baseline),
    mib(r.final),
    mib(r.growth),
    own(r),
    String(r.tapEvents),
  ]);
  const head = [
    "executor",
    "taps",
    "runs",
    "s",
    "runs/s",
    "heap+buffers MiB (warm)",
    "final MiB",
    "growth MiB",
    "executor memory (warm → final)",
    "tap events",
  ];
  return table(head, rows);
}
