// mask-grad on wasm against a float64 loop written here: −∞ → 0, every other value (finite, +∞, NaN) → scale · grad, rows
// of every length mod 4 (the 4-lane path and its tail), strided grad and masked, a scale that float32 cannot hold, and
// the shape error.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, stridedPairs, thrown, wasmExecutor } from "../test-util.js";

const ex = await wasmExecutor();

/** masked == −∞ ? 0 : scale · grad, in float64 (rounded once to float32 by the caller). */
function maskGrad64(grad: Tensor, masked: Tensor, scale: number): Float64Array {
  const g = f64(grad);
  const m = f64(masked);
  return g.map((v, k) => (m[k] === -Infinity ? 0 : scale * v));
}

/** A masked forward output: −∞ at every third element, +∞ and NaN sprinkled in (they are not hidden). */
function maskedLike(shape: number[], seed: number): Tensor {
  const t = random(shape, seed);
  const d = Float32Array.from(t.toFloat32Array(), (v, i) =>
    i % 3 === 1 ? -Infinity : i % 11 === 5 ? Infinity : i % 13 === 4 ? NaN : v,
  );
  return new Tensor(d, shape);
}

const run = (g: Tensor, m: Tensor, scale: number, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "mask-grad", { scale }, [g, m], g.shape);
const expectGrad = (got: Tensor, g: Tensor, m: Tensor, scale: number) =>
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(Float32Array.from(maskGrad64(g, m, scale))));

describe("mask-grad on wasm", () => {
  it("−∞ gives exactly 0; finite, +∞ and NaN give scale · grad, rounded once; rows of every length mod 4", () => {
    for (const s of [1, 3, 4, 5, 8, 37]) {
      const g = random([2, 3, s], s, 4);
      const m = maskedLike([2, 3, s], s + 50);
      for (const scale of [1, 0.1, -3]) {
        const got = run(g, m, scale);
        expectGrad(got, g, m, scale);
        const mv = m.toFloat32Array();
        got.toFloat32Array().forEach((v, k) => {
          if (mv[k] === -Infinity) expect(Object.is(v, 0)).toBe(true);
        });
      }
    }
  });

  it("a NaN or infinite grad where masked is −∞ still gives 0", () => {
    const g = Tensor.from([NaN, Infinity, -Infinity, 2, NaN], [5]);
    const m = Tensor.from([-Infinity, -Infinity, -Infinity, -Infinity, 1], [5]);
    const got = Array.from(run(g, m, 2).toFloat32Array());
    expect(got.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(Number.isNaN(got[4])).toBe(true);
  });

  it("strided grad and masked (scores [B, H, L, S] seen transposed), each and both", () => {
    const g = random([2, 3, 5, 7], 1);
    const gT = random([2, 3, 7, 5], 2).permute([0, 1, 3, 2]);
    const m = maskedLike([2, 3, 5, 7], 3);
    const mT = maskedLike([7, 2, 3, 5], 4).permute([1, 2, 3, 0]);
    for (const [a, b] of stridedPairs([g, m], [gT, mT])) expectGrad(run(a, b, 0.35, true), a, b, 0.35);
  });

  it("scalar and empty inputs; shapes that differ are a shape error naming <node>.masked", () => {
    expectGrad(run(Tensor.from([3], []), Tensor.from([1], []), 0.5), Tensor.from([3], []), Tensor.from([1], []), 0.5);
    expect(run(random([2, 0], 1), random([2, 0], 2), 1).shape).toEqual([2, 0]);
    const e = thrown(() =>
      onWasm(ex, "mask-grad", { scale: 1 }, [random([2, 3], 1), random([2, 4], 2)], [2, 3], "masked.grad"),
    ) as AttnGraphError;
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.code, e.subject]).toEqual(["shape", "masked.grad.masked"]);
  });
});
