import { describe, expect, it } from "vitest";
import { AttnGraphError, ShapeError } from "./errors.js";
import { Tensor } from "./tensor.js";

import { iota, naive } from "./test-views.js";

describe("Tensor construction", () => {
  it("defaults to row-major strides", () => {
    const t = new Tensor(iota(24), [2, 3, 4]);
    expect(t.strides).toEqual([12, 4, 1]);
    expect(t.offset).toBe(0);
    expect(t.size).toBe(24);
    expect(t.rank).toBe(3);
  });

  it("rejects a view that reaches outside its buffer", () => {
    expect(() => new Tensor(iota(5), [2, 3])).toThrow(ShapeError);
    expect(() => new Tensor(iota(6), [2, 3], [3, 1], 1)).toThrow(/outside its buffer/);
    expect(() => new Tensor(iota(6), [2, 3], [3, 1], -1)).toThrow(ShapeError);
    expect(() => new Tensor(iota(6), [3, 2], [1, 3])).not.toThrow();
    expect(() => new Tensor(iota(6), [3, 2], [1, 4])).toThrow(ShapeError);
  });

  it("checks both ends of a view with negative strides", () => {
    // offset 5 walking backwards reaches 0..5: fine
    expect(new Tensor(iota(6), [6], [-1], 5).toArray()).toEqual([5, 4, 3, 2, 1, 0]);
    // a negative stride on one dim and a positive one on the other can overshoot the end
    expect(() => new Tensor(iota(2), [2, 2], [-2, 1], 1)).toThrow(ShapeError);
    expect(() => new Tensor(iota(6), [6], [-1], 4)).toThrow(ShapeError);
  });

  it("rejects bad shapes, strides and offsets", () => {
    expect(() => new Tensor(iota(6), [2, -3])).toThrow(ShapeError);
    expect(() => new Tensor(iota(6), [2.5, 2])).toThrow(ShapeError);
    expect(() => new Tensor(iota(6), [2, 3], [3])).toThrow(/strides do not match/);
    expect(() => new Tensor(iota(6), [2, 3], [3, 1], 0.5)).toThrow(ShapeError);
    expect(() => new Tensor(iota(6), [2, 3], [1.5, 1])).toThrow(ShapeError);
  });

  it("throws errors recognised by AttnGraphError.isInstance with subject, expected and got", () => {
    try {
      new Tensor(iota(5), [2, 3]);
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e)).toBe(true);
      const err = e as ShapeError;
      expect(err.code).toBe("shape");
      expect(err.subject).toBe("tensor");
      expect(err.expected).toBe("indices within [0, 5)");
      expect(err.got).toContain("shape [2, 3]");
    }
  });

  it("freezes shape and strides", () => {
    const t = Tensor.zeros([2, 2]);
    expect(Object.isFrozen(t.shape)).toBe(true);
    expect(Object.isFrozen(t.strides)).toBe(true);
  });
});

describe("Tensor.from / zeros / fromNested", () => {
  it("copies values into a new float32 buffer", () => {
    const src = [1.5, 2, 3, 4];
    const t = Tensor.from(src, [2, 2]);
    src[0] = 99;
    expect(t.data).toBeInstanceOf(Float32Array);
    expect(t.toArray()).toEqual([1.5, 2, 3, 4]);
  });

  it("rounds to float32", () => {
    expect(Tensor.from([0.1], [1]).get(0)).toBe(Math.fround(0.1));
  });

  it("rejects a value count that does not match the shape", () => {
    expect(() => Tensor.from([1, 2, 3], [2, 2])).toThrow(/4 values for \[2, 2\].*got 3/);
  });

  it("zeros", () => {
    const t = Tensor.zeros([2, 3]);
    expect(t.toArray()).toEqual([0, 0, 0, 0, 0, 0]);
    expect(() => Tensor.zeros([-1])).toThrow(ShapeError);
  });

  it("fromNested reads nested arrays like torch.tensor", () => {
    const t = Tensor.fromNested([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(t.shape).toEqual([2, 3]);
    expect(t.toArray()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Tensor.fromNested(7).shape).toEqual([]);
    expect(Tensor.fromNested(7).toArray()).toEqual([7]);
    expect(Tensor.fromNested([]).shape).toEqual([0]);
    expect(Tensor.fromNested([[], []]).shape).toEqual([2, 0]);
    expect(Tensor.fromNested([[[1], [2]]]).shape).toEqual([1, 2, 1]);
  });

  it("fromNested rejects ragged nesting", () => {
    expect(() => Tensor.fromNested([[1, 2], [3]])).toThrow(ShapeError);
    expect(() => Tensor.fromNested([[1, 2], 3])).toThrow(/ragged/);
    expect(() => Tensor.fromNested([1, [2]])).toThrow(/ragged/);
    expect(() => Tensor.fromNested([[[1, 2]], [[3]]])).toThrow(/depth 2/);
    expect(() => Tensor.fromNested([[], [1]])).toThrow(ShapeError);
  });
});

describe("reshape and view", () => {
  it("reshape of a contiguous tensor is a view sharing data", () => {
    const t = Tensor.from(iota(12), [3, 4]);
    const r = t.reshape([2, 2, 3]);
    expect(r.data).toBe(t.data);
    expect(r.shape).toEqual([2, 2, 3]);
    expect(r.strides).toEqual([6, 3, 1]);
    expect(r.toArray()).toEqual(t.toArray());
  });

  it("reshape of a contiguous view with an offset keeps the offset", () => {
    const base = new Tensor(iota(10), [6], [1], 3);
    const r = base.reshape([2, 3]);
    expect(r.data).toBe(base.data);
    expect(r.offset).toBe(3);
    expect(r.toArray()).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it("reshape of a transposed view copies and keeps row-major values", () => {
    const t = Tensor.from(iota(6), [2, 3]).transpose(0, 1); // [[0, 3], [1, 4], [2, 5]]
    const r = t.reshape([6]);
    expect(r.data).not.toBe(t.data);
    expect(r.toArray()).toEqual([0, 3, 1, 4, 2, 5]);
    const r2 = t.reshape([2, 3]);
    expect(r2.toNested()).toEqual([
      [0, 3, 1],
      [4, 2, 5],
    ]);
  });

  it("reshape of a permuted view stays a view where dims only split or merge inside dense runs", () => {
    // [B, H, L, D] = [2, 3, 4, 5] seen as [B, L, H, D] (a transpose of H and L): merging H and D is impossible,
    // splitting D or merging B alone is fine.
    const t = Tensor.from(iota(120), [2, 3, 4, 5]).transpose(1, 2);
    const split = t.reshape([2, 4, 3, 5, 1]);
    expect(split.data).toBe(t.data);
    expect(split.toArray()).toEqual(naive(t));
    const merged = t.reshape([2, 4, 15]);
    expect(merged.data).not.toBe(t.data);
    expect(merged.toArray()).toEqual(naive(t));
  });

  it("view throws where torch.view would, and works where it would", () => {
    const t = Tensor.from(iota(6), [2, 3]);
    const tt = t.transpose(0, 1);
    expect(() => tt.view([6])).toThrow(ShapeError);
    expect(() => tt.view([6])).toThrow(/use reshape\(\) or contiguous\(\)/);
    expect(tt.view([3, 2, 1]).data).toBe(t.data); // adding a size-1 dim is always a view
    expect(tt.view([3, 1, 2]).toArray()).toEqual([0, 3, 1, 4, 2, 5]);
    expect(t.view([3, 2]).data).toBe(t.data);
    // the first two columns of a 2x4 matrix cannot merge with their rows...
    const cols = new Tensor(iota(8), [2, 2], [4, 1]);
    expect(() => cols.view([4])).toThrow(ShapeError);
    expect(cols.view([2, 2, 1]).toArray()).toEqual([0, 1, 4, 5]);
    // ...but every other column can (x[:, ::2] has strides [4, 2]: one evenly spaced run)
    const even = new Tensor(iota(8), [2, 2], [4, 2]);
    expect(even.view([4]).strides).toEqual([2]);
    expect(even.view([4]).toArray()).toEqual([0, 2, 4, 6]);
    // but a row slice (a dense block of rows) can
    const rows = new Tensor(iota(12), [2, 4], [4, 1], 4);
    expect(rows.view([8]).toArray()).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("view splits a dim whose stride is not 1", () => {
    const t = new Tensor(iota(16), [4, 2], [1, 8]); // column-major 4x2
    const v = t.view([2, 2, 2]);
    expect(v.strides).toEqual([2, 1, 8]);
    expect(v.toArray()).toEqual(naive(t));
  });

  it("infers one -1 dim", () => {
    const t = Tensor.from(iota(24), [2, 3, 4]);
    expect(t.reshape([-1, 4]).shape).toEqual([6, 4]);
    expect(t.reshape([2, -1]).shape).toEqual([2, 12]);
    expect(t.view([-1]).shape).toEqual([24]);
    expect(t.reshape([4, -1, 2]).shape).toEqual([4, 3, 2]);
    expect(() => t.reshape([-1, -1])).toThrow(/at most one dim may be -1/);
    expect(() => t.reshape([5, -1])).toThrow(/element count/);
    expect(() => t.reshape([5, 5])).toThrow(/24 elements/);
    expect(() => t.reshape([-2, -12])).toThrow(ShapeError);
  });

  it("reshapes size-0 and scalar tensors", () => {
    const e = Tensor.zeros([0, 3]);
    expect(e.reshape([3, 0]).shape).toEqual([3, 0]);
    expect(e.reshape([-1]).shape).toEqual([0]);
    const s = Tensor.from([5], []);
    expect(s.reshape([1, 1]).toArray()).toEqual([5]);
    expect(s.reshape([1, 1]).data).toBe(s.data);
    expect(Tensor.from([5], [1, 1]).view([]).shape).toEqual([]);
    expect(Tensor.from([5], [1]).reshape([-1]).shape).toEqual([1]);
  });
});

describe("permute and transpose", () => {
  it("permute is a view with permuted shape and strides", () => {
    const t = Tensor.from(iota(24), [2, 3, 4]);
    const p = t.permute([2, 0, 1]);
    expect(p.data).toBe(t.data);
    expect(p.shape).toEqual([4, 2, 3]);
    expect(p.strides).toEqual([1, 12, 4]);
    expect(p.get(3, 1, 2)).toBe(t.get(1, 2, 3));
  });

  it("permute rejects non-permutations", () => {
    const t = Tensor.zeros([2, 3, 4]);
    expect(() => t.permute([0, 1])).toThrow(ShapeError);
    expect(() => t.permute([0, 1, 1])).toThrow(/not a permutation/);
    expect(() => t.permute([0, 1, 3])).toThrow(ShapeError);
    expect(() => t.permute([0, 1, -1])).toThrow(ShapeError);
  });

  it("transpose swaps two dims, negative dims counting from the end", () => {
    const t = Tensor.from(iota(24), [2, 3, 4]);
    const a = t.transpose(-1, -2);
    expect(a.shape).toEqual([2, 4, 3]);
    expect(a.get(1, 3, 2)).toBe(t.get(1, 2, 3));
    expect(t.transpose(0, -1).shape).toEqual([4, 3, 2]);
    expect(t.transpose(1, 1).strides).toEqual(t.strides);
    expect(() => t.transpose(0, 3)).toThrow(/dim out of range/);
    expect(() => t.transpose(-4, 0)).toThrow(ShapeError);
  });

  it("the heads transpose of attention: [B, L, H, D] → [B, H, L, D]", () => {
    const B = 2,
      L = 3,
      H = 2,
      D = 2;
    const x = Tensor.from(iota(B * L * H * D), [B, L, H, D]);
    const y = x.transpose(1, 2);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let l = 0; l < L; l++) for (let d = 0; d < D; d++) expect(y.get(b, h, l, d)).toBe(x.get(b, l, h, d));
  });
});
