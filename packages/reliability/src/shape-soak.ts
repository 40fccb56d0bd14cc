// Two lifecycle soaks of one executor, each reading what live values hold on it (ExecutorEntry.live):
// - shapes: more distinct input shapes in flight at once than the session's prepared-plan cache holds (32), round after
//   round, so bindings are evicted while their runs still hold arenas. What runs hold must come back every round.
// - dispose mid-run: a session disposed while runs are in flight, many times over one executor. Nothing they held
//   (arenas, step values, weight uploads) may stay behind.
// Used by lifecycle.test.ts (short) and soak-main.ts (`pnpm soak`, long; the table in docs/reliability.md).
import { normalizeConfig } from "@attngraph/attention";
import type { Executor } from "@attngraph/graph";
import { compile, type Session } from "@attngraph/runtime";
import { materialize } from "./cases.js";
import type { ExecutorEntry } from "./executors.js";
import { table } from "./table.js";

const config = normalizeConfig({ dIn: 32, dOut: 32, numHeads: 4, numKvHeads: 2, causal: true, qkvBias: true });
const base = materialize({ config, fusedQkv: false, B: 2, T: 8, S: 8, padding: true, magnitude: 1, seed: 1 });

/** Inputs of `n` distinct lengths (T = 1..n), with a key padding mask like the soak's. */
function inputsOfLengths(n: number) {
  return Array.from(
    { length: n },
    (_, i) =>
      materialize({ config, fusedQkv: false, B: 2, T: i + 1, S: i + 1, padding: true, magnitude: 1, seed: 100 + i })
        .inputs,
  );
}

function liveOf(entry: ExecutorEntry, executor: Executor): number {
  if (!entry.live) throw new Error(`${entry.name}: the entry has no live-memory reading`);
  return entry.live.read(executor);
}

/** Bytes of the executor's memory as the engine sees it (a wasm Memory only grows), where that means something. */
function reservedOf(executor: Executor): number | undefined {
  const memory = (executor as { memory?: unknown }).memory;
  return memory instanceof WebAssembly.Memory ? memory.buffer.byteLength : undefined;
}

export interface ShapeSoakResult {
  readonly executor: string;
  readonly unit: string;
  readonly shapes: number;
  readonly inFlight: number;
  readonly rounds: number;
  readonly ms: number;
  /** Live memory before the session, after the first round (warm), after the last round, after dispose(). */
  readonly before: number;
  readonly warm: number;
  readonly final: number;
  readonly disposed: number;
  /** The wasm Memory's size after the first and the last round (it never shrinks, so growth here is a leak). */
  readonly reserved?: { readonly warm: number; readonly final: number };
}

/** `rounds` rounds of `inFlight` concurrent runs, each of a different one of `shapes` input lengths. */
export async function shapeSoak(
  entry: ExecutorEntry,
  options: { readonly shapes: number; readonly inFlight: number; readonly rounds: number },
): Promise<ShapeSoakResult> {
  const { shapes, inFlight, rounds } = options;
  const inputs = inputsOfLengths(shapes);
  const executor = await entry.create();
  await executor.init?.();
  const before = liveOf(entry, executor);
  const session = await compile(base.graph, { executors: [executor], weights: base.weights });
  let next = 0;
  const round = () => Promise.all(Array.from({ length: inFlight }, () => session.run(inputs[next++ % shapes]!)));
  await round();
  const warm = liveOf(entry, executor);
  const reservedWarm = reservedOf(executor);
  const t0 = performance.now();
  for (let r = 1; r < rounds; r++) await round();
  const ms = performance.now() - t0;
  const final = liveOf(entry, executor);
  const reservedFinal = reservedOf(executor);
  await session.dispose();
  const disposed = liveOf(entry, executor);
  await executor.dispose?.();
  const reserved =
    reservedWarm === undefined || reservedFinal === undefined
      ? undefined
      : { warm: reservedWarm, final: reservedFinal };
  return {
    executor: entry.name,
    unit: entry.live!.unit,
    shapes,
    inFlight,
    rounds,
    ms,
    before,
    warm,
    final,
    disposed,
    ...(reserved ? { reserved } : {}),
  };
}

export interface DisposeSoakResult {
  readonly executor: string;
  readonly unit: string;
  readonly times: number;
  /** Runs that finished before dispose() reached them, and runs that rejected because of it. */
  readonly finished: number;
  readonly rejected: number;
  /** Errors other than SessionDisposedError (should be none). */
  readonly otherErrors: readonly string[];
  readonly before: number;
  readonly after: number;
}

/** `times` sessions on one executor, each disposed while `inFlight` runs of different shapes are under way. */
export async function disposeMidRunSoak(
  entry: ExecutorEntry,
  options: { readonly times: number; readonly inFlight: number },
): Promise<DisposeSoakResult> {
  const inputs = inputsOfLengths(options.inFlight);
  const executor = await entry.create();
  await executor.init?.();
  const before = liveOf(entry, executor);
  let finished = 0;
  let rejected = 0;
  const otherErrors: string[] = [];
  for (let i = 0; i < options.times; i++) {
    const session: Session = await compile(base.graph, { executors: [executor], weights: base.weights });
    const runs = inputs.map((x) =>
      session.run(x).then(
        () => "finished",
        (e: unknown) => e,
      ),
    );
    // Let the runs get under way before pulling the session away, by a varying amount so that dispose() lands at
    // different steps: microtask hops for executors whose steps never leave the microtask queue (cpu, wasm), timer
    // ticks for those that wait on a device (webgpu).
    if (i % 2 === 0) for (let k = 0; k < i * 4; k++) await Promise.resolve();
    else await new Promise((r) => setTimeout(r, i % 5));
    await session.dispose();
    for (const r of await Promise.all(runs)) {
      if (r === "finished") finished++;
      else if (r instanceof Error && r.name === "SessionDisposedError") rejected++;
      else otherErrors.push(String(r));
    }
  }
  const after = liveOf(entry, executor);
  await executor.dispose?.();
  return {
    executor: entry.name,
    unit: entry.live!.unit,
    times: options.times,
    finished,
    rejected,
    otherErrors,
    before,
    after,
  };
}

export function formatShapeSoakTable(results: readonly ShapeSoakResult[]): string {
  const mib = (n: number) => (n / 1024 ** 2).toFixed(2);
  return table(
    [
      "executor",
      "shapes × in flight × rounds",
      "s",
      "live before → warm → final → disposed",
      "wasm Memory MiB (warm → final)",
    ],
    results.map((r) => [
      r.executor,
      `${r.shapes} × ${r.inFlight} × ${r.rounds}`,
      (r.ms / 1000).toFixed(1),
      `${r.before} → ${r.warm} → ${r.final} → ${r.disposed} ${r.unit}`,
      r.reserved ? `${mib(r.reserved.warm)} → ${mib(r.reserved.final)}` : "-",
    ]),
  );
}

export function formatDisposeSoakTable(results: readonly DisposeSoakResult[]): string {
  return table(
    ["executor", "disposals", "runs finished / rejected", "other errors", "live before → after"],
    results.map((r) => [
      r.executor,
      String(r.times),
      `${r.finished} / ${r.rejected}`,
      String(r.otherErrors.length),
      `${r.before} → ${r.after} ${r.unit}`,
    ]),
  );
}
