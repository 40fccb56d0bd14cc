import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const x = Tensor.from(
  Array.from({ length: 24 }, (_, i) => i),
  [2, 3, 4],
);

describe("slice kernel", () => {
  const run = (t: Tensor, axis: number, start: number, size: number) =>
    cpu.dispatch({
      kind: "slice",
      node: "q",
      attrs: { axis, start, size },
      inputs: [t],
      outShape: t.shape.map((d, i) => (i === (axis < 0 ? axis + t.rank : axis) ? size : d)),
    });

  it("narrows the last axis as a view at an offset", () => {
    const y = run(x, -1, 1, 2);
    expect(y.shape).toEqual([2, 3, 2]);
    expect(y.data).toBe(x.data);
    expect(y.offset).toBe(1);
    expect(y.toArray().slice(0, 4)).toEqual([1, 2, 5, 6]);
  });

  it("narrows a middle axis", () => {
    const y = run(x, 1, 2, 1);
    expect(y.shape).toEqual([2, 1, 4]);
    expect(y.toArray()).toEqual([8, 9, 10, 11, 20, 21, 22, 23]);
  });

  it("slices a strided view", () => {
    const t = x.permute([2, 0, 1]); // [4, 2, 3]
    expect(run(t, 0, 3, 1).toArray()).toEqual([3, 7, 11, 15, 19, 23]);
  });

  it("allows an empty slice at the end", () => {
    expect(run(x, 2, 4, 0).shape).toEqual([2, 3, 0]);
  });

  it("rejects a slice past the axis and an axis out of range", () => {
    expect(() => run(x, 2, 3, 2)).toThrow(/q\.size/);
    expect(() => run(x, 3, 0, 1)).toThrow(/q\.axis/);
    expect(() => run(x, -4, 0, 1)).toThrow(/q\.axis/);
  });
});
