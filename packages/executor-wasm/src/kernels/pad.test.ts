// pad on wasm against a float64 loop written here: every axis, negative axes, zero-width sides, strided x, an empty x
// (zeros only), and the attribute errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor } from "../test-util.js";

const ex = await wasmExecutor();

/** x with `before`/`after` zeros along `axis`, in float64: [outer, d, inner] → [outer, before + d + after, inner]. */
function pad64(x: Tensor, axis: number, before: number, after: number): { shape: number[]; data: Float64Array } {
  const a = axis < 0 ? axis + x.rank : axis;
  const outer = x.shape.slice(0, a).reduce((p, d) => p * d, 1);
  const inner = x.shape.slice(a + 1).reduce((p, d) => p * d, 1);
  const d = x.shape[a]!;
  const m = before + d + after;
  const src = f64(x);
  const data = new Float64Array(outer * m * inner);
  for (let o = 0; o < outer; o++)
    for (let i = 0; i < d * inner; i++) data[(o * m + before) * inner + i] = src[o * d * inner + i]!;
  return { shape: x.shape.map((v, i) => (i === a ? m : v)), data };
}

const expectPad = (x: Tensor, axis: number, before: number, after: number, views = false) => {
  const want = pad64(x, axis, before, after);
  const got = (views ? onWasmViews : onWasm)(ex, "pad", { axis, before, after }, [x], want.shape);
  expect(got.shape).toEqual(want.shape);
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(Float32Array.from(want.data)));
};

describe("pad on wasm", () => {
  const x = random([2, 3, 5], 1);
  for (const axis of [0, 1, 2, -1, -2, -3]) {
    it(`axis ${axis} of [2, 3, 5]`, () => {
      for (const [before, after] of [
        [1, 2],
        [0, 3],
        [4, 0],
        [0, 0],
      ] as const)
        expectPad(x, axis, before, after);
    });
  }

  it("the gradient of a fused QKV slice: [B, T, E] padded to [B, T, 3E] at each third", () => {
    const q = random([2, 4, 6], 2);
    expectPad(q, -1, 0, 12);
    expectPad(q, -1, 6, 6);
    expectPad(q, -1, 12, 0);
  });

  it("strided x (transposed, permuted), rank 1 and rank 4", () => {
    const t = random([5, 3], 3).transpose(0, 1);
    for (const axis of [0, 1, -1, -2]) expectPad(t, axis, 2, 1, true);
    const p = random([2, 3, 4, 5], 4).permute([3, 1, 0, 2]);
    for (const axis of [0, 1, 2, 3, -1, -3]) expectPad(p, axis, 1, 2, true);
    expectPad(random([7], 5), 0, 3, 1);
    expectPad(random([7], 5), -1, 0, 1);
  });

  it("an empty x gives zeros only; an output with a 0 dim is empty", () => {
    expectPad(random([2, 0, 3], 1), 1, 2, 1);
    expectPad(random([2, 0], 1), -1, 1, 0);
    expect(onWasm(ex, "pad", { axis: 0, before: 1, after: 1 }, [random([3, 0], 1)], [5, 0]).shape).toEqual([5, 0]);
  });

  it("an axis out of range or a negative count is an attribute error naming <node>.<attr>", () => {
    const call = (attrs: Record<string, unknown>, t: Tensor = x) =>
      thrown(() => onWasm(ex, "pad", attrs, [t], [2, 3, 5], "qkv.grad")) as AttnGraphError;
    for (const [attrs, field] of [
      [{ axis: 3, before: 0, after: 0 }, "axis"],
      [{ axis: -4, before: 0, after: 0 }, "axis"],
      [{ axis: 0.5, before: 0, after: 0 }, "axis"],
      [{ axis: 0, before: -1, after: 0 }, "before"],
      [{ axis: 0, before: 0, after: 1.5 }, "after"],
    ] as const) {
      const e = call(attrs);
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect(e.code).toBe("attr");
      expect(e.subject).toBe(`qkv.grad.${field}`);
    }
    expect(call({ axis: 0, before: 0, after: 0 }, Tensor.from([1], [])).subject).toBe("qkv.grad.axis");
  });
});
