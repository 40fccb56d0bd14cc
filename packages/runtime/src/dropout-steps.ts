// Training-mode dropout draws a new mask on every run: the run's dropout step is folded into each dropout seed
// (dropoutSeedAt) before the kernels see it. Kernels and executors are unchanged: they get a seed, as before, and the
// same seed gives the same mask on every executor. Step 0 is the seed itself, so a session's first run (and a
// `dropoutMasks: "fixed"` session's every run) draws the mask the graph's seed names.
import { dropoutSeedAt, GraphValidationError, type OpRegistry } from "@attngraph/graph";
import type { Plan } from "@attngraph/scheduler";

type Attrs = Readonly<Record<string, unknown>>;

/** Per plan: each step whose op declares dropout seeds (OpDef attrs with `dropoutSeed`), and those attributes. */
interface SeededStep {
  readonly node: string;
  readonly attrs: Attrs;
  readonly keys: readonly string[];
  /** The op's `training` default when it declares one (dropout is identity in eval: its seed then draws nothing). */
  readonly trainingDefault: boolean | undefined;
}
const seededSteps = new WeakMap<Plan, readonly SeededStep[]>();

function seededOf(plan: Plan, registry: OpRegistry): readonly SeededStep[] {
  let list = seededSteps.get(plan);
  if (list === undefined) {
    const found: SeededStep[] = [];
    for (const step of plan.steps) {
      if (!registry.has(step.kind)) continue;
      const specs = registry.get(step.kind, step.node).attrs as Record<string, { dropoutSeed?: boolean }>;
      const keys = Object.keys(specs).filter((k) => specs[k]!.dropoutSeed === true);
      const training = (specs as Record<string, { default?: unknown }>)["training"];
      const trainingDefault = training === undefined ? undefined : training.default === true;
      if (keys.length) found.push({ node: step.node, attrs: step.attrs, keys, trainingDefault });
    }
    seededSteps.set(plan, (list = found));
  }
  return list;
}

/** Whether a seeded step draws a mask: always, unless its op has a `training` attribute and it is false (eval). */
function draws({ node, attrs, trainingDefault }: SeededStep, bound: ReadonlyMap<string, Attrs>): boolean {
  if (trainingDefault === undefined) return true;
  const training = (bound.get(node) ?? attrs)["training"];
  return training === undefined ? trainingDefault : training === true;
}

/**
 * The attributes a run's steps get: `bound` (steps whose dims the run's shapes bound) with every dropout seed folded
 * with `step`. Returns `bound` itself when nothing changes (step 0, or no step that draws a mask), so an eval session's
 * steps keep the same attribute objects run after run (the executors' checkCall then remembers them).
 */
export function withDropoutStep(
  plan: Plan,
  registry: OpRegistry,
  bound: ReadonlyMap<string, Attrs>,
  step: number,
): ReadonlyMap<string, Attrs> {
  if (step === 0) return bound;
  const seeded = seededOf(plan, registry).filter((s) => draws(s, bound));
  if (seeded.length === 0) return bound;
  const out = new Map(bound);
  for (const { node, attrs, keys } of seeded) {
    const base = { ...(bound.get(node) ?? attrs) };
    for (const k of keys) base[k] = dropoutSeedAt(base[k] as number, step);
    out.set(node, base);
  }
  return out;
}

/** A run's dropout step: `explicit` (RunOptions.dropoutStep, checked), else 0 for fixed masks, else the run's index. */
export function dropoutStepOf(explicit: unknown, masks: "per-run" | "fixed", runIndex: number): number {
  if (explicit !== undefined) {
    if (!Number.isSafeInteger(explicit) || (explicit as number) < 0)
      throw new GraphValidationError(
        "run options.dropoutStep",
        "invalid dropout step",
        "an integer >= 0",
        String(explicit),
      );
    return explicit as number;
  }
  return masks === "fixed" ? 0 : runIndex;
}
