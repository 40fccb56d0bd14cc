// Every golden case (packages/testkit/golden), run node by node through the wasm kernels the way a lowered plan of the
// standard attention builder calls them, unfused (score → mask → softmax → dropout → weighted-sum) and fused
// (attention): testkit's goldenByKernels. The runtime path (compile → run, fused or tapped) is covered by
// `attngraph conformance --executor wasm`.
import { describe, expect } from "vitest";
import { valuesOf } from "@attngraph/testkit";
import { itRunsGoldenCases } from "@attngraph/testkit/test-helpers";
import { wasmExecutor } from "./test-util.js";

describe("golden cases through the wasm kernels", async () => {
  const ex = await wasmExecutor();
  itRunsGoldenCases(
    () => valuesOf(ex),
    (check) => {
      const before = ex.inUseBytes;
      check();
      expect(ex.inUseBytes, "everything released").toBe(before);
    },
  );
});
