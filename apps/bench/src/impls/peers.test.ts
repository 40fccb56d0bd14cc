// Each peer, on small shapes, against the float64 reference: the harness compares like with like only if every peer
// computes the same function (causal mask, scale, weight layout, out_proj bias).
import { describe, expect, it } from "vitest";
import { makeBlockProblem, makeDecodeProblem, makeProblem } from "../problem.js";
import { maxAbsDiff, referenceAttention, referenceBlock, referenceDecode } from "../test-reference.js";
import { ortImpl, ortNodeImpl, ortWebImpl } from "./ort.js";
import { TFJS_NO_DECODE, tfjsImpl } from "./tfjs.js";

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

  it.each(shapes)(
    "computes the transformer block (--problem block) like the float64 reference at b=$b T=$t d=$d h=$h",
    async (shape) => {
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
    },
  );
});

describe.each([
  ortWebImpl,
  ortNodeImpl,
  ortImpl("web", "mha"),
  ortImpl("node", "mha"),
  ortImpl("web", "export"),
  ortImpl("node", "export"),
])("$name, --problem decode", (impl) => {
  it.each(shapes)("runs the past key/value model like the float64 reference at b=$b T=$t d=$d h=$h", async (shape) => {
    const p = makeDecodeProblem(shape, 3);
    expect(impl.unsupported?.("decode")).toBeUndefined();
    const runner = await impl.setup(p, { threads: 1 });
    try {
      const out = await runner.run();
      expect(out).toHaveLength(shape.b * shape.d);
      expect(maxAbsDiff(out, referenceDecode(p))).toBeLessThan(1e-5);
      expect(await runner.run()).toEqual(out);
    } finally {
      await runner.dispose();
    }
  });
});

describe("the contrib MultiHeadAttention and exported-graph variants", () => {
  it("run decode only, and only when named", async () => {
    for (const impl of [
      ortImpl("web", "mha"),
      ortImpl("node", "mha"),
      ortImpl("web", "export"),
      ortImpl("node", "export"),
    ]) {
      expect(impl.name).toMatch(/^ort-(web|node)-(mha|export)$/);
      expect(impl.onlyWhenNamed).toBe(true);
      expect(impl.unsupported?.("attention")).toMatch(/decode only/);
      await expect(impl.setup(makeProblem(shapes[0]!), { threads: 1 })).rejects.toThrow(/decode only/);
    }
  });
});

describe.each([tfjsImpl("cpu"), tfjsImpl("wasm")])("$name, --problem decode", (impl) => {
  it("says why it has no decode rows, and refuses to set one up", async () => {
    expect(impl.unsupported?.("decode")).toBe(TFJS_NO_DECODE);
    expect(impl.unsupported?.("attention")).toBeUndefined();
    await expect(impl.setup(makeDecodeProblem(shapes[0]!), { threads: 1 })).rejects.toThrow(TFJS_NO_DECODE);
  });
});
