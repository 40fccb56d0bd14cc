// The golden cases through an executor's kernels (kernel-chain.ts), as the cpu and wasm golden tests each checked
// them: every expected intermediate the chain forms is within the case's tolerance of PyTorch's.
import { expect, it } from "vitest";
import { compare } from "@attngraph/tensor";
import type { ValueExecutor } from "../contract/value-executor.js";
import { goldenByKernels, UNFUSED_ONLY } from "./kernel-chain.js";
import { goldenDir, listCases, loadCase } from "./load.js";

/**
 * One test a golden case and chain (unfused, fused), on the executor `values()` gives, each check run by `wrap` (wasm's
 * expects nothing left allocated after it). Call inside a describe.
 */
export function itRunsGoldenCases<V>(
  values: () => ValueExecutor<V>,
  wrap: (check: () => void) => void = (check) => check(),
): void {
  const files = listCases(goldenDir);
  it("finds the golden cases", () => {
    expect(files.length).toBeGreaterThan(10);
  });
  for (const fused of [false, true]) {
    it.each(files.map((f) => [f.slice(goldenDir.length + 1), f]))(
      `%s (${fused ? "fused attention" : "unfused chain"})`,
      (_name, file) =>
        wrap(() => {
          const c = loadCase(file);
          const got = goldenByKernels(values(), c, fused);
          // The unfused chain forms every intermediate a case may expect; the fused one all but the weights and scores.
          const names = Object.keys(c.expected).filter((n) => !(fused && UNFUSED_ONLY.has(n)));
          expect(names.length).toBeGreaterThan(fused ? 2 : 5);
          for (const name of names) {
            const result = compare(got[name]!, c.expected[name]!, c.tolerance);
            expect({ name, ...result }).toMatchObject({ name, ok: true });
          }
        }),
    );
  }
}
