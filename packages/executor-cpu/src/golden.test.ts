// Every golden case (packages/testkit/golden), run node by node through the CPU executor's kernels, the way a lowered
// plan of the standard attention builder would call them, unfused and fused (testkit's goldenByKernels). The graph,
// scheduler and runtime are not involved: this checks the kernels against PyTorch, not the plumbing.
import { describe } from "vitest";
import { valuesOf } from "@attngraph/testkit";
import { itRunsGoldenCases } from "@attngraph/testkit/test-helpers";
import { createCpuExecutor } from "./register-kernels.js";

describe("golden cases through the CPU kernels", () => {
  itRunsGoldenCases(() => valuesOf(createCpuExecutor()));
});
