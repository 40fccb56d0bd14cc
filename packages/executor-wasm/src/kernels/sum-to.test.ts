// sum-to on wasm against a float64 loop written here: leading axes, middle axes of 1, the GQA head-group case, a full
// reduction to a scalar, a copy, both loop orders (a kept last axis read contiguously, a reduced one read contiguously),
// rows longer than the module's column tile, strided (transposed) x, empty reductions, and the shape error.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, type Shape } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** x [...] summed down to `out` (lined up from the last axis), in float64. */
function sumTo64(x: Tensor, out: Shape): Float64Array {
  const xs = x.shape;
  const lead = xs.length - out.length;
  const data = f64(x);
  const res = new Float64Array(out.reduce((p, d) => p * d, 1));
  const idx = new Array<number>(xs.length).fill(0);
  for (let f = 0; f < data.length; f++) {
    let o = 0;
    for (let k = 0; k < out.length; k++) o = o * out[k]! + (out[k] === 1 ? 0 : idx[lead + k]!);
    res[o]! += data[f]!;
    for (let d = xs.length - 1; d >= 0; d--) {
      if (++idx[d]! < xs[d]!) break;
      idx[d] = 0;
    }
  }
  return res;
}

const expectSum = (got: Tensor, x: Tensor, out: Shape) => {
  expect(got.shape).toEqual(out);
  expect(worst(got, new Tensor(Float32Array.from(sumTo64(x, out)), out), 1e-6, 1e-6)).toBeLessThan(1);
};

const sumTo = (x: Tensor, out: Shape, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "sum-to", { shape: out }, [x], out);

describe("sum-to on wasm", () => {
  const x = random([2, 3, 4], 1);
  for (const out of [
    [4],
    [3, 4],
    [1, 3, 4],
    [2, 1, 4],
    [2, 3, 1],
    [1, 1, 4],
    [2, 1, 1],
    [3, 1],
    [1],
    [],
    [1, 1, 1],
  ] as Shape[]) {
    it(`[2, 3, 4] → [${out.join(", ")}]`, () => expectSum(sumTo(x, out), x, out));
  }

  it("outShape equal to x's shape is a copy, bit for bit", () => {
    const got = sumTo(x, [2, 3, 4]);
    expect(Array.from(got.toFloat32Array())).toEqual(Array.from(x.toFloat32Array()));
    const t = random([4, 3, 2], 2).permute([2, 1, 0]);
    expect(Array.from(sumTo(t, [2, 3, 4], true).toFloat32Array())).toEqual(Array.from(t.contiguous().toFloat32Array()));
  });

  it("a bias gradient [B, T, E] → [E], E of every length mod 4 and past the module's 1024-column tile", () => {
    for (const e of [1, 3, 4, 7, 33, 1030, 2500]) {
      const g = random([3, 5, e], e);
      expectSum(sumTo(g, [e]), g, [e]);
    }
  });

  it("GQA head groups [B, Hkv, g, S, D] → [B, Hkv, 1, S, D], and middle axes of 1 over a leading axis", () => {
    const g = random([2, 2, 3, 5, 6], 3);
    expectSum(sumTo(g, [2, 2, 1, 5, 6]), g, [2, 2, 1, 5, 6]);
    const y = random([2, 3, 4, 5], 4);
    for (const out of [
      [2, 1, 1, 5],
      [3, 1, 5],
      [1, 4, 1],
      [4, 5],
      [2, 3, 1, 1],
    ] as Shape[])
      expectSum(sumTo(y, out), y, out);
  });

  it("a reduced axis read contiguously ([N, S] → [N, 1], long rows) takes the other loop order, same numbers", () => {
    for (const s of [1, 2, 5, 8, 1000]) {
      const t = random([6, s], s + 10);
      expectSum(sumTo(t, [6, 1]), t, [6, 1]);
      expectSum(sumTo(t, []), t, []);
    }
  });

  it("strided (transposed, permuted) x in both loop orders", () => {
    const t = random([7, 5], 5).transpose(0, 1); // [5, 7], rows strided
    for (const out of [[7], [1, 7], [5, 1], [], [5, 7]] as Shape[]) expectSum(sumTo(t, out, true), t, out);
    const p = random([4, 3, 6, 2], 6).permute([2, 0, 3, 1]); // [6, 4, 2, 3]
    for (const out of [
      [4, 2, 3],
      [1, 2, 1],
      [6, 1, 1, 3],
      [4, 1, 3],
      [6, 4, 2, 1],
    ] as Shape[])
      expectSum(sumTo(p, out, true), p, out);
  });

  it("sums float64: a large value does not swallow small ones", () => {
    const t = Tensor.from([1e8, ...new Array<number>(1000).fill(1), -1e8], [1002, 1]);
    expect(Array.from(sumTo(t, [1]).toFloat32Array())).toEqual([1000]);
    expect(Array.from(sumTo(t.reshape([1, 1002]), [1, 1]).toFloat32Array())).toEqual([1000]);
    const cols = Tensor.from(
      Array.from({ length: 1002 * 3 }, (_, i) => (i < 3 ? 1e8 : i >= 1001 * 3 ? -1e8 : 1)),
      [1002, 3],
    );
    expect(Array.from(sumTo(cols, [3]).toFloat32Array())).toEqual([1000, 1000, 1000]);
  });

  it("empty: a reduced axis of 0 gives zeros, an output of 0 elements is empty", () => {
    expect(Array.from(sumTo(random([0, 4], 1), [4]).toFloat32Array())).toEqual([0, 0, 0, 0]);
    expect(Array.from(sumTo(random([3, 0, 2], 1), [3, 1, 2]).toFloat32Array())).toEqual([0, 0, 0, 0, 0, 0]);
    expect(sumTo(random([3, 0], 1), [0]).shape).toEqual([0]);
  });

  it("an outShape x does not broadcast from is a shape error naming <node>.shape", () => {
    for (const out of [[3], [2, 2, 3, 4], [2, 4, 4]]) {
      const e = thrown(() => onWasm(ex, "sum-to", { shape: out }, [x], out, "bias.grad")) as AttnGraphError;
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect(e.code).toBe("shape");
      expect(e.subject).toBe("bias.grad.shape");
    }
  });
});
