import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { kernelKinds } from "@attngraph/graph";
import { CpuExecutor } from "./executor.js";
import { cpuKernels, createCpuExecutor, registerCpuKernels } from "./register-kernels.js";
import { softmaxKernel } from "./kernels/softmax.js";

describe("kernel registration", () => {
  it("has exactly one built-in kernel per op kind declared by @attngraph/graph (silu and the like: the pointwise kernel)", () => {
    const kinds = cpuKernels.map(([kind]) => kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect([...kinds].sort()).toEqual(kernelKinds().sort());
  });

  it("registers nothing on import: a bare executor supports no op", () => {
    const ex = new CpuExecutor();
    for (const kind of kernelKinds()) expect(ex.supports(kind, {}).ok).toBe(false);
  });

  it("createCpuExecutor registers every built-in kernel", () => {
    const ex = createCpuExecutor();
    for (const kind of kernelKinds()) expect(ex.supports(kind, {})).toEqual({ ok: true });
  });

  it("createCpuExecutor takes a shorter list", () => {
    const ex = createCpuExecutor({ kernels: [["softmax", softmaxKernel]] });
    expect(ex.supports("softmax", {}).ok).toBe(true);
    expect(ex.supports("score", {}).ok).toBe(false);
    const y = ex.dispatch({
      kind: "softmax",
      node: "w",
      attrs: { scale: 1 },
      inputs: [Tensor.from([0, 0], [2])],
      outShape: [2],
    });
    expect(y.toArray()).toEqual([0.5, 0.5]);
  });

  it("registering the built-ins twice on one executor is a duplicate-kernel error", () => {
    const ex = createCpuExecutor();
    expect(() => registerCpuKernels(ex)).toThrow(AttnGraphError);
    expect(() => registerCpuKernels(ex)).toThrow(/executor cpu/);
  });
});
