// Each peer, on small shapes, against the float64 reference: the harness compares like with like only if every peer
// computes the same function (causal mask, scale, weight layout, out_proj bias).
import { describe, expect, it } from "vitest";
import { makeBlockProblem, makeProblem } from "../problem.js";
import { maxAbsDiff, referenceAttention, referenceBlock } from "../test-reference.js";
import { ortNodeImpl, ortWebImpl } from "./ort.js";
import { tfjsImpl } from "./tfjs.js";

const shapes = [
  { b: 2, t: 6, d: 8, h: 2 },
  { b: 1, t: 5, d: 12, h: 3 },
];

describe.each([tfjsImpl("cpu"), tfjsImpl("wasm"), ortWebImpl, ortNodeImpl])("$name", (impl) => {
  it.each(shapes)("matches the float64 reference at b=$b T=$t d=$d h=$h", async (shape) => {
    const p = makeProblem(shape, 3);
    const runner = await impl.setup(p, { threads: 1 });
    try {
      const out = await runner.run();
      expect(out).toHaveLength(shape.b * shape.t * shape.d);
      expect(maxAbsDiff(out, referenceAttention(p))).toBeLessThan(1e-5);
      expect(await runner.run()).toEqual(out); // runs are repeatable
      expect(runner.threads).toBe(1);
    } finally {
      await runner.dispose();
    }
  });

  it.each(shapes)("computes the transformer block (--problem block) like the float64 reference at b=$b T=$t d=$d h=$h", async (shape) => {
    const p = makeBlockProblem(shape, 3);
    const runner = await impl.setup(p, { threads: 1 });
    try {
      const out = await runner.run();
      expect(out).toHaveLength(shape.b * shape.t * shape.d);
      expect(maxAbsDiff(out, referenceBlock(p))).toBeLessThan(1e-5);
      expect(await runner.run()).toEqual(out);
    } finally {
      await runner.dispose();
    }
  });
});
