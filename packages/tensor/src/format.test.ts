import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatTensor } from "./format.js";
import { Tensor } from "./tensor.js";

interface TorchCase {
  name: string;
  shape: number[];
  values: (number | "nan" | "inf" | "-inf")[];
  torch: string;
}

// What PyTorch printed for each case (scripts/torch-print.py regenerates the file).
const fixture = JSON.parse(readFileSync(new URL("./format.torch.json", import.meta.url), "utf8")) as {
  cases: TorchCase[];
};
const decode = (v: TorchCase["values"][number]): number =>
  v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : v;

describe("formatTensor matches PyTorch's print", () => {
  it("prints a 2x3 matrix with 4 decimals and aligned rows", () => {
    const t = Tensor.fromNested([
      [0.43, 0.15, 0.89],
      [0.55, 0.87, 0.66],
    ]);
    expect(t.toString()).toBe("tensor([[0.4300, 0.1500, 0.8900],\n        [0.5500, 0.8700, 0.6600]])");
  });

  it("prints integer values as 1., 2., 3.", () => {
    expect(Tensor.fromNested([1, 2, 3]).toString()).toBe("tensor([1., 2., 3.])");
  });

  it("puts a blank line between the matrices of a 3-D tensor", () => {
    const t = Tensor.from([0, 1, 2, 3, 4, 5, 6, 7], [2, 2, 2]);
    expect(t.toString()).toBe("tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
  });

  it("prints -inf as -inf without widening the other cells", () => {
    expect(Tensor.fromNested([-Infinity, 1, 2]).toString()).toBe("tensor([-inf, 1., 2.])");
    expect(Tensor.fromNested([Number.NaN, 1.5]).toString()).toBe("tensor([   nan, 1.5000])");
  });

  it("switches to scientific notation for a wide range", () => {
    expect(Tensor.fromNested([1e-5, 1]).toString()).toBe("tensor([1.0000e-05, 1.0000e+00])");
    expect(Tensor.fromNested([1, 10000]).toString()).toBe("tensor([1.0000e+00, 1.0000e+04])");
  });

  it("aligns negative numbers on their right edge", () => {
    expect(Tensor.fromNested([-1.5, 2.25, -0.125]).toString()).toBe("tensor([-1.5000,  2.2500, -0.1250])");
  });

  it("summarises more than 1000 elements with ...", () => {
    const s = Tensor.from(
      Array.from({ length: 1001 }, (_, i) => i % 2),
      [1001],
    ).toString();
    expect(s).toBe("tensor([0., 1., 0.,  ..., 0., 1., 0.])");
    expect(Tensor.zeros([1000]).toString()).not.toContain("...");
  });

  it("rounds ties half to even like Python, not away from zero like toFixed", () => {
    expect(Tensor.fromNested([0.03125, -0.03125]).toString()).toBe("tensor([ 0.0312, -0.0312])");
    expect(Tensor.fromNested(0.09375).toString()).toBe("tensor(0.0938)");
  });

  for (const c of fixture.cases) {
    it(`torch case: ${c.name}`, () => {
      expect(formatTensor(c.shape, Float32Array.from(c.values.map(decode)))).toBe(c.torch);
    });
  }

  it("prints a strided view in row-major order", () => {
    const t = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]).transpose(0, 1);
    expect(t.toString()).toBe("tensor([[1., 4.],\n        [2., 5.],\n        [3., 6.]])");
  });

  it("rejects a value count that does not match the shape", () => {
    expect(() => formatTensor([2, 2], new Float32Array(3))).toThrow(/4 values for \[2, 2\].*got 3/);
  });
});
