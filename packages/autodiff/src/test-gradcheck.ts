// Central finite differences in float64 against the gradient graph, both run by the float64 interpreter (eval64).
// L = sum(loss ⊙ seed) for a non-scalar loss (seed random), the loss itself for a scalar one.
import type { OpGraph } from "@attngraph/graph";
import { mulberry32 } from "@attngraph/testkit";
import { expect } from "vitest";
import { grad } from "./grad.js";
import { eval64, type Value64 } from "./test-eval64.js";

export type Rng = () => number;

export function rngOf(seed: number): Rng {
  return mulberry32(seed);
}

/** A value of `shape` with entries uniform in (−scale, scale). */
export function randomValue(rng: Rng, shape: readonly number[], scale = 1): Value64 {
  const n = shape.reduce((a, b) => a * b, 1);
  return { shape, data: Float64Array.from({ length: n }, () => (2 * rng() - 1) * scale) };
}

/** Whole numbers in [0, n) (token ids, targets). */
export function randomIds(rng: Rng, shape: readonly number[], n: number): Value64 {
  const count = shape.reduce((a, b) => a * b, 1);
  return { shape, data: Float64Array.from({ length: count }, () => Math.floor(rng() * n)) };
}

export interface GradCheck {
  readonly graph: OpGraph;
  readonly loss: string;
  readonly wrt: readonly string[];
  readonly values: Readonly<Record<string, Value64>>;
  /** Entries checked per wrt (spread over the tensor); default all up to 48. */
  readonly samples?: number;
}

/**
 * Checks every wrt's gradient from grad()'s graph against central differences: |analytic − numeric| <= 1e-6 +
 * 1e-5·|numeric| at each sampled entry. Returns the gradient graph's values for further checks.
 */
export function expectGradientsMatch(c: GradCheck, rng: Rng = rngOf(7)): Map<string, Value64> {
  const g = grad(c.graph, { loss: c.loss, wrt: c.wrt });
  const seedValue = g.seed ? randomValue(rng, eval64(c.graph, c.values).get(c.loss)!.shape) : undefined;
  const lossOf = (values: Readonly<Record<string, Value64>>): number => {
    const out = eval64(c.graph, values).get(c.loss)!;
    let sum = 0;
    for (let i = 0; i < out.data.length; i++) sum += out.data[i]! * (seedValue ? seedValue.data[i]! : 1);
    return sum;
  };
  const all = eval64(g.graph, seedValue ? { ...c.values, [g.seed!]: seedValue } : c.values);
  for (const w of c.wrt) {
    const analytic = all.get(g.grads[w]!)!;
    const base = c.values[w]!;
    expect(analytic.shape, `${w}.grad shape`).toEqual(base.shape);
    const n = base.data.length;
    const samples = Math.min(n, c.samples ?? 48);
    for (let s = 0; s < samples; s++) {
      const i = samples === n ? s : Math.floor((s * n) / samples);
      const h = 1e-6 * Math.max(1, Math.abs(base.data[i]!));
      const at = (delta: number) => {
        const data = Float64Array.from(base.data);
        data[i]! += delta;
        return lossOf({ ...c.values, [w]: { shape: base.shape, data } });
      };
      const numeric = (at(h) - at(-h)) / (2 * h);
      const got = analytic.data[i]!;
      expect(Math.abs(got - numeric), `${w}.grad[${i}]: analytic ${got}, numeric ${numeric}`).toBeLessThanOrEqual(
        1e-6 + 1e-5 * Math.abs(numeric),
      );
    }
  }
  return all;
}
