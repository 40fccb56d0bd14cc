import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

describe("mul kernel", () => {
  it("a · b with broadcasting from the last axis, over strided inputs", () => {
    const a = Tensor.from([1, 2, 3, 4, 5, 6], [3, 2]).transpose(0, 1); // [[1, 3, 5], [2, 4, 6]]
    const b = Tensor.from([10, 100, 1000], [3]);
    const out = cpu.dispatch({ kind: "mul", node: "gated", attrs: {}, inputs: [a, b], outShape: [2, 3] }) as Tensor;
    expect(out.toArray()).toEqual([10, 300, 5000, 20, 400, 6000]);
  });

  it("shapes that do not broadcast, or an outShape that is not theirs, are errors naming the field", () => {
    const a = Tensor.from([1, 2, 3], [3]);
    for (const [b, outShape, field] of [
      [Tensor.from([1, 2], [2]), [3], "gated.b"],
      [Tensor.from([1], [1]), [4], "gated.outShape"],
    ] as const) {
      try {
        cpu.dispatch({ kind: "mul", node: "gated", attrs: {}, inputs: [a, b], outShape });
        expect.unreachable();
      } catch (e) {
        expect(AttnGraphError.isInstance(e)).toBe(true);
        expect((e as AttnGraphError).subject).toBe(field);
      }
    }
  });
});
