import { describe, expect, it } from "vitest";
import { makeBlockProblem, makeDecodeProblem, makeProblem } from "../problem.js";
import { maxAbsDiff, referenceAttention, referenceBlock } from "../test-reference.js";
import { importedImpl } from "./attngraph-onnx.js";

describe("the imported ONNX rows (wasm-onnx, cpu-onnx)", () => {
  it.each(["cpu", "wasm"] as const)(
    "%s: the ort model of the attention and of the block, imported, computes them",
    async (executor) => {
      const impl = importedImpl(executor);
      expect(impl.name).toBe(`${executor}-onnx`);
      expect(impl.onlyWhenNamed).toBe(true);
      const attention = makeProblem({ b: 2, t: 6, d: 8, h: 2 });
      const block = makeBlockProblem({ b: 1, t: 5, d: 12, h: 3 }, 5);
      for (const [p, want, tol] of [
        [attention, referenceAttention(attention), 1e-6],
        [block, referenceBlock(block), 1e-5],
      ] as const) {
        const runner = await impl.setup(p, { threads: 1 });
        try {
          expect(maxAbsDiff(await runner.run(), want)).toBeLessThan(tol);
        } finally {
          await runner.dispose();
        }
      }
    },
  );

  it("runs the forward problems only", async () => {
    const impl = importedImpl("wasm");
    expect(impl.unsupported!("attention")).toBeUndefined();
    expect(impl.unsupported!("decode")).toMatch(/attention and block problems only/);
    await expect(impl.setup(makeDecodeProblem({ b: 1, t: 4, d: 8, h: 2 }), { threads: 1 })).rejects.toThrow(
      /attention and block problems only/,
    );
  });
});
