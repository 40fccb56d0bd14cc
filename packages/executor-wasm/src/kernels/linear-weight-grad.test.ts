// linear-weight-grad on wasm (the module's SIMD matmul on gradᵀ · x) against testkit's float64 reference:
// edge tiles (Out not a multiple of 5, In not of 8), depth past one k block (rows > 256), more output rows than one
// row block (80), leading axes of any rank, every operand layout (grad read in place when it is a transposed view,
// transposed by the module otherwise; x in place with any column stride, copied when its leading axes do not
// collapse), no rows at all, and the shape errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { linearWeightGrad64 } from "@attngraph/testkit";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** dW[o, i] = Σ_r grad[r, o] · x[r, i], leading axes flattened into r, in float64 (testkit's reference). */
const weightGrad64 = (grad: Tensor, x: Tensor): Float64Array =>
  linearWeightGrad64(f64(grad), grad.shape[grad.rank - 1]!, f64(x), x.shape[x.rank - 1]!);

const expectGrad = (grad: Tensor, x: Tensor, views = false) => {
  const shape = [grad.shape[grad.rank - 1]!, x.shape[x.rank - 1]!];
  const got = (views ? onWasmViews : onWasm)(ex, "linear-weight-grad", {}, [grad, x], shape);
  expect(got.shape).toEqual(shape);
  // float32 sums over the rows: the tolerance grows with their count
  const rows = grad.size / shape[0]!;
  expect(
    worst(got, new Tensor(Float32Array.from(weightGrad64(grad, x)), shape), 1e-6 * Math.sqrt(rows), 1e-5),
  ).toBeLessThan(1);
};

describe("linear-weight-grad on wasm", () => {
  for (const [rows, nOut, nIn] of [
    [1, 1, 1],
    [3, 5, 8],
    [7, 3, 5],
    [67, 13, 300],
    [300, 9, 20],
    [600, 90, 33],
    [40, 161, 17],
  ] as const) {
    it(`grad [2, ${rows}, ${nOut}], x [2, ${rows}, ${nIn}] → [${nOut}, ${nIn}]`, () => {
      expectGrad(random([2, rows, nOut], rows + nOut), random([2, rows, nIn], rows + nIn + 1));
    });
  }

  it("leading axes of rank 0, 1 and 3", () => {
    expectGrad(random([5], 1), random([4], 2)); // one position: an outer product
    expectGrad(random([9, 6], 3), random([9, 4], 4));
    expectGrad(random([2, 3, 4, 6], 5), random([2, 3, 4, 11], 6));
  });

  it("a transposed grad is read in place; a permuted one is transposed by the module", () => {
    const gT = random([12, 70], 7).transpose(0, 1); // [70, 12]: rows one element apart
    expectGrad(gT, random([70, 21], 8), true);
    const gP = random([3, 12, 70], 9).permute([0, 2, 1]); // [3, 70, 12]
    expectGrad(gP, random([3, 70, 21], 10), true);
    const gQ = random([70, 3, 12], 11).permute([1, 0, 2]); // [3, 70, 12]: leading axes that do not collapse
    expectGrad(gQ, random([3, 70, 21], 12), true);
  });

  it("x transposed (column stride != 1), x with leading axes that do not collapse (copied)", () => {
    const g = random([3, 50, 9], 13);
    expectGrad(g, random([3, 21, 50], 14).permute([0, 2, 1]), true);
    expectGrad(g, random([50, 3, 21], 15).permute([1, 0, 2]), true);
    expectGrad(g.permute([1, 0, 2]).contiguous().permute([1, 0, 2]), random([50, 3, 21], 16).permute([1, 0, 2]), true);
  });

  it("no rows at all gives zeros; Out or In of 0 gives an empty result", () => {
    expect(
      Array.from(onWasm(ex, "linear-weight-grad", {}, [random([0, 3], 1), random([0, 2], 2)], [3, 2]).toFloat32Array()),
    ).toEqual([0, 0, 0, 0, 0, 0]);
    expect(onWasm(ex, "linear-weight-grad", {}, [random([4, 0], 1), random([4, 2], 2)], [0, 2]).shape).toEqual([0, 2]);
    expect(onWasm(ex, "linear-weight-grad", {}, [random([4, 3], 1), random([4, 0], 2)], [3, 0]).shape).toEqual([3, 0]);
  });

  it("mismatched leading axes or ranks are shape errors naming <node>.x / <node>.grad", () => {
    const call = (g: Tensor, x: Tensor) =>
      thrown(() => onWasm(ex, "linear-weight-grad", {}, [g, x], [3, 4], "q_proj.dW")) as AttnGraphError;
    for (const [g, x, field] of [
      [random([2, 5, 3], 1), random([2, 6, 4], 2), "x"],
      [random([2, 5, 3], 1), random([10, 4], 2), "x"],
      [Tensor.from([1], []), random([4], 2), "grad"],
    ] as const) {
      const e = call(g, x);
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect(e.code).toBe("shape");
      expect(e.subject).toBe(`q_proj.dW.${field}`);
    }
  });
});
