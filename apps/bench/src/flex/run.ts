// The loop of `--problem flex`: for each shape, part and variant, every implementation set up, timed (measure.ts, as
// the other problems) and disposed in turn; then the outputs of that variant compared with each other (compare.ts:
// a row is a mismatch when it disagrees with more than half of the others). A row that cannot get the memory it needs
// is an `unavailable` row saying so; the run goes on.
import { cpus } from "node:os";
import type { BenchOptions } from "../cli.js";
import { agreementOf, RELATIVE_TOLERANCE } from "../compare.js";
import { measure, type MeasureOptions } from "../measure.js";
import { MIN_RUNS } from "../run.js";
import { FlexMemoryError } from "./attngraph.js";
import { makeFlexProblem } from "./problem.js";
import type { FlexCase, FlexImpl, FlexRow } from "./types.js";
import { FLEX_CONSTANTS, FLEX_PARTS, FLEX_VARIANTS, type FlexPart, type FlexVariant } from "./variants.js";

export interface FlexResults {
  readonly meta: {
    readonly date: string;
    readonly problem: "flex";
    readonly node: string;
    readonly cpu: string;
    readonly cores: number;
    readonly threads: number;
    readonly runs: number;
    readonly warmup: number;
    readonly budgetS: number;
    readonly minRuns: number;
    readonly tolerance: number;
    readonly window: number;
    readonly softcap: number;
  };
  readonly rows: readonly FlexRow[];
}

/** What to run besides the common options: which variants and parts (default all). */
export interface FlexSelection {
  readonly variants?: readonly FlexVariant[];
  readonly parts?: readonly FlexPart[];
}

/** The cases of one shape in table order; `causal-builtin` is a core row only (the layer's `causal` is already built in). */
export function flexCases(sel: FlexSelection = {}): FlexCase[] {
  // Table order, whatever order the command line named them in.
  const parts = FLEX_PARTS.filter((x) => sel.parts?.includes(x) ?? true);
  const variants = FLEX_VARIANTS.filter((x) => sel.variants?.includes(x) ?? true);
  return parts.flatMap((part) =>
    variants.filter((v) => part === "core" || v !== "causal-builtin").map((variant) => ({ variant, part })),
  );
}

/** Whether an error is a lack of memory: ours (FlexMemoryError), the wasm heap's refusal, or the engine's. */
export function isOutOfMemory(e: unknown): boolean {
  for (let x = e, i = 0; x instanceof Error && i < 8; x = x.cause, i++) {
    if (x instanceof FlexMemoryError || (x as { code?: unknown }).code === "memory-limit") return true;
    if (
      /out of memory|Array buffer allocation failed|Invalid typed array length|bad_alloc|memory access out of bounds/i.test(
        x.message,
      )
    )
      return true;
  }
  return false;
}

function message(e: unknown): string {
  const text = e instanceof Error ? `${e.name === "Error" ? "" : `${e.name}: `}${e.message}` : String(e);
  return text.split("\n")[0]!.slice(0, 200);
}

export async function runFlexBench(
  options: BenchOptions,
  impls: readonly FlexImpl[],
  sel: FlexSelection,
  progress: (line: string) => void,
): Promise<FlexResults> {
  const mo: MeasureOptions = {
    runs: options.runs,
    warmup: options.warmup,
    budgetMs: options.budgetS * 1000,
    minRuns: MIN_RUNS,
  };
  const rows: FlexRow[] = [];
  for (const shape of options.shapes) {
    const p = makeFlexProblem(shape);
    for (const c of flexCases(sel)) {
      const label = `${c.part} ${c.variant} ${shape.b},${shape.t},${shape.d},${shape.h}`;
      const base = {
        problem: "flex" as const,
        variant: c.variant,
        part: c.part,
        b: shape.b,
        t: shape.t,
        d: shape.d,
        h: shape.h,
      };
      const group: FlexRow[] = [];
      const outputs = new Map<string, Float32Array>();
      for (const impl of impls) {
        const notRun = (e: unknown): FlexRow => {
          const oom = isOutOfMemory(e);
          const status = oom || impl.family === "peer" ? "unavailable" : "failed";
          const reason = e instanceof FlexMemoryError ? e.message : oom ? `out of memory: ${message(e)}` : message(e);
          progress(`${label} ${impl.name}: ${status}: ${reason}`);
          return {
            ...base,
            impl: impl.name,
            family: impl.family,
            threads: options.threads,
            medianMs: null,
            minMs: null,
            runs: 0,
            samplesMs: [],
            warmupRuns: 0,
            budgetLimited: false,
            ...(impl.family === "attngraph"
              ? { plannedPeakBytes: e instanceof FlexMemoryError ? (e.plannedPeakBytes ?? null) : null }
              : {}),
            status,
            reason,
          };
        };
        let runner;
        try {
          runner = await impl.setup(p, c, { threads: options.threads });
        } catch (e) {
          group.push(notRun(e));
          continue;
        }
        try {
          let last: Float32Array | undefined;
          const m = await measure(async () => void (last = await runner.run()), mo);
          outputs.set(impl.name, Float32Array.from(last!));
          progress(`${label} ${impl.name}: ${m.medianMs.toFixed(3)} ms (median of ${m.samplesMs.length})`);
          group.push({
            ...base,
            impl: impl.name,
            family: impl.family,
            threads: runner.threads,
            medianMs: m.medianMs,
            minMs: m.minMs,
            runs: m.samplesMs.length,
            samplesMs: m.samplesMs,
            warmupRuns: m.warmupRuns,
            budgetLimited: m.budgetLimited,
            ...(impl.family === "attngraph" ? { plannedPeakBytes: runner.plannedPeakBytes ?? null } : {}),
            status: "ok",
            ...(runner.note ? { note: runner.note } : {}),
          });
        } catch (e) {
          group.push({
            ...notRun(e),
            ...(impl.family === "attngraph" ? { plannedPeakBytes: runner.plannedPeakBytes ?? null } : {}),
          });
        } finally {
          await runner.dispose().catch(() => undefined);
        }
      }
      rows.push(...checkGroup(group, outputs));
    }
  }
  const cpu = cpus();
  return {
    meta: {
      date: new Date().toISOString(),
      problem: "flex",
      node: process.version,
      cpu: cpu[0]?.model.trim() ?? "unknown",
      cores: cpu.length,
      threads: options.threads,
      runs: options.runs,
      warmup: options.warmup,
      budgetS: options.budgetS,
      minRuns: MIN_RUNS,
      tolerance: RELATIVE_TOLERANCE,
      window: FLEX_CONSTANTS.window,
      softcap: FLEX_CONSTANTS.softcap,
    },
    rows,
  };
}

/** The outputs of one variant, part and shape against each other; max |Δ| against the first that produced one. */
function checkGroup(group: readonly FlexRow[], outputs: ReadonlyMap<string, Float32Array>): FlexRow[] {
  return group.map((r) => {
    const a = agreementOf(r.impl, outputs);
    return a ? { ...r, ...a } : r;
  });
}
