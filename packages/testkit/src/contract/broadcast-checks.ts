// The broadcasting binary ops (add in block-checks.ts, mul in llama-checks.ts) against their float64 references: one
// `it` per pair of shapes, random a and b from a seed the caller picks.
import { it } from "vitest";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

/** A label and the shapes of a and b. */
export type BroadcastCase = readonly [string, number[], number[]];

export function broadcastChecks(
  ctx: ContractContext,
  c: {
    readonly kind: "add" | "mul";
    /** The test's name before the case label. */
    readonly title: string;
    readonly cases: readonly BroadcastCase[];
    readonly seed: (as: readonly number[], bs: readonly number[]) => number;
    readonly reference: (
      a: Float64Array,
      as: readonly number[],
      b: Float64Array,
      bs: readonly number[],
    ) => { shape: number[]; data: Float64Array };
  },
): void {
  for (const [label, as, bs] of c.cases) {
    it(`${c.title}: ${label}`, async () => {
      const rng = createRng(c.seed(as, bs));
      const a = randomTensor(rng, as);
      const b = randomTensor(rng, bs);
      const want = c.reference(f64(a), as, f64(b), bs);
      expectClose(await ctx.h.run(c.kind, attrs.none(), [a, b], want.shape), want, OP_TOL, `${c.kind} ${label}`);
    });
  }
}
