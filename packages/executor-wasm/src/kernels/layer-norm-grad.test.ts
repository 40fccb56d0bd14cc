// layer-norm-grad and layer-norm-weight-grad on wasm against testkit's float64 references: E of every length mod 4 (the
// module's f64x2 path and its tail), with and without a weight, strided grad, x and weight, rows far from 0 (the
// two-pass statistics), a constant row, many rows for the weight gradient, and the shape/attribute errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import {
  layerNormGrad64 as layerNormGradRef64,
  layerNormWeightGrad64 as layerNormWeightGradRef64,
} from "@attngraph/testkit";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** testkit's float64 references, on the tensors' row-major elements. */
const layerNormGrad64 = (grad: Tensor, x: Tensor, eps: number, weight?: Tensor): Float64Array =>
  layerNormGradRef64(f64(grad), f64(x), x.shape[x.rank - 1]!, eps, weight && f64(weight));
const layerNormWeightGrad64 = (grad: Tensor, x: Tensor, eps: number): Float64Array =>
  layerNormWeightGradRef64(f64(grad), f64(x), x.shape[x.rank - 1]!, eps);

const close = (got: Tensor, want: Float64Array, abs = 1e-5, rel = 1e-5) =>
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), abs, rel)).toBeLessThan(1);
const dx = (g: Tensor, x: Tensor, w?: Tensor, eps = 1e-5, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "layer-norm-grad", { eps }, [g, x, w], x.shape);
const dw = (g: Tensor, x: Tensor, eps = 1e-5, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "layer-norm-weight-grad", { eps }, [g, x], [x.shape[x.rank - 1]!]);

describe("layer-norm-grad on wasm", () => {
  it("E of every length mod 4, with and without a weight", () => {
    for (const e of [1, 2, 3, 4, 5, 8, 33, 64]) {
      const g = random([2, 3, e], e);
      const x = random([2, 3, e], e + 10, 2);
      const w = random([e], e + 20);
      close(dx(g, x), layerNormGrad64(g, x, 1e-5));
      close(dx(g, x, w, 1e-3), layerNormGrad64(g, x, 1e-3, w));
    }
  });

  it("strided grad, x and weight (each and all)", () => {
    const g = random([2, 5, 7], 1);
    const gT = random([7, 2, 5], 2).permute([1, 2, 0]);
    const x = random([2, 5, 7], 3);
    const xT = random([2, 7, 5], 4).permute([0, 2, 1]);
    const weight = new Tensor(random([14], 6).toFloat32Array(), [7], [2], 1); // every other element: stride 2
    for (const [a, b] of [
      [gT, x],
      [g, xT],
      [gT, xT],
    ] as const) {
      close(dx(a, b, undefined, 1e-5, true), layerNormGrad64(a, b, 1e-5));
      close(dx(a, b, weight, 1e-5, true), layerNormGrad64(a, b, 1e-5, weight));
    }
  });

  it("rows far from 0 (two-pass statistics) and a constant row (x̂ = 0: dx = rstd · (ĝ − mean ĝ))", () => {
    const x = new Tensor(
      Float32Array.from(random([4, 16], 7, 0.01).toFloat32Array(), (v) => 1e4 + v),
      [4, 16],
    );
    const g = random([4, 16], 8);
    close(dx(g, x), layerNormGrad64(g, x, 1e-5), 1e-3, 1e-4);
    const c = Tensor.from(new Array<number>(8).fill(3), [1, 8]);
    const gc = random([1, 8], 9);
    close(dx(gc, c), layerNormGrad64(gc, c, 1e-5), 1e-3, 1e-5);
  });

  it("mismatched shapes, a weight of the wrong length, a bad eps: typed errors naming the field", () => {
    const call = (inputs: readonly (AnyTensor | undefined)[], eps: unknown = 1e-5) =>
      thrown(() => onWasm(ex, "layer-norm-grad", { eps }, inputs, [2, 4], "ln1.grad")) as AttnGraphError;
    const g = random([2, 4], 1);
    for (const [inputs, eps, code, field] of [
      [[g, random([2, 5], 2)], 1e-5, "shape", "x"],
      [[g, random([2, 4], 2), random([5], 3)], 1e-5, "shape", "weight"],
      [[g, random([2, 4], 2)], 0, "attr", "eps"],
      [[Tensor.from([1], []), Tensor.from([1], [])], 1e-5, "shape", "x"],
    ] as const) {
      const e = call(inputs, eps);
      expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
      expect([e.code, e.subject]).toEqual([code, `ln1.grad.${field}`]);
    }
  });
});

describe("layer-norm-weight-grad on wasm", () => {
  it("Σ over rows of grad ⊙ x̂, E of every length mod 4, leading axes of any rank", () => {
    for (const e of [1, 3, 4, 7, 40]) {
      const g = random([3, 4, e], e);
      const x = random([3, 4, e], e + 30, 3);
      close(dw(g, x), layerNormWeightGrad64(g, x, 1e-5));
    }
    const g = random([6], 1);
    const x = random([6], 2);
    close(dw(g, x), layerNormWeightGrad64(g, x, 1e-5));
  });

  it("many rows (float64 accumulators), strided grad and x", () => {
    const g = random([700, 24], 3);
    const x = random([700, 24], 4);
    close(dw(g, x), layerNormWeightGrad64(g, x, 1e-5), 1e-5, 1e-5);
    const gT = random([24, 50], 5).transpose(0, 1);
    const xT = random([2, 24, 25], 6).permute([0, 2, 1]).reshape([50, 24]);
    close(dw(gT, xT, 1e-5, true), layerNormWeightGrad64(gT, xT, 1e-5));
  });

  it("no rows gives zeros; mismatched shapes are a shape error naming <node>.x", () => {
    expect(Array.from(dw(random([0, 3], 1), random([0, 3], 2)).toFloat32Array())).toEqual([0, 0, 0]);
    const e = thrown(() =>
      onWasm(ex, "layer-norm-weight-grad", { eps: 1e-5 }, [random([2, 3], 1), random([3, 3], 2)], [3], "ln1.dgamma"),
    ) as AttnGraphError;
    expect([e.code, e.subject]).toEqual(["shape", "ln1.dgamma.x"]);
  });
});
