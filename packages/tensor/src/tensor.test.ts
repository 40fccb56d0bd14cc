import { describe, expect, it } from "vitest";
import { AttnGraphError, ShapeError } from "./errors.js";
import { Tensor } from "./tensor.js";
// The project's one seeded generator, by path: @attngraph/testkit depends on this package, so it cannot be a
// devDependency here (a cycle turbo refuses). prng.ts imports nothing, so nothing else of testkit comes along.
import { mulberry32 } from "../../testkit/src/prng.js";

/** Row-major elements of a view by the definition: data[offset + Σ index·stride], one multi-index at a time. */
function naive(t: Tensor): number[] {
  const out: number[] = [];
  const idx = new Array<number>(t.rank).fill(0);
  for (let n = 0; n < t.size; n++) {
    let p = t.offset;
    for (let d = 0; d < t.rank; d++) p += idx[d]! * t.strides[d]!;
    out.push(t.data[p]!);
    for (let d = t.rank - 1; d >= 0; d--) {
      if (++idx[d]! < t.shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

const iota = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => i);

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
    const B = 2, L = 3, H = 2, D = 2;
    const x = Tensor.from(iota(B * L * H * D), [B, L, H, D]);
    const y = x.transpose(1, 2);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let l = 0; l < L; l++)
          for (let d = 0; d < D; d++) expect(y.get(b, h, l, d)).toBe(x.get(b, l, h, d));
  });
});

describe("contiguous, clone, copyInto", () => {
  it("contiguous returns the same object when already contiguous", () => {
    const t = Tensor.from(iota(6), [2, 3]);
    expect(t.contiguous()).toBe(t);
    const tt = t.transpose(0, 1);
    const c = tt.contiguous();
    expect(c).not.toBe(tt);
    expect(c.isContiguous()).toBe(true);
    expect(c.toArray()).toEqual([0, 3, 1, 4, 2, 5]);
  });

  it("isContiguous ignores the stride of size-1 dims", () => {
    expect(new Tensor(iota(6), [1, 2, 3], [999, 3, 1]).isContiguous()).toBe(true);
    expect(new Tensor(iota(6), [2, 1, 3], [3, 0, 1]).isContiguous()).toBe(true);
    expect(new Tensor(iota(6), [2, 3, 1], [3, 1, 7]).isContiguous()).toBe(true);
    expect(new Tensor(iota(6), [3, 2], [1, 3]).isContiguous()).toBe(false);
    expect(new Tensor(iota(12), [2, 3], [6, 1]).isContiguous()).toBe(false);
    expect(Tensor.from([1], []).isContiguous()).toBe(true);
    // the [1, 3] transpose of a [3, 1] column is still dense
    expect(Tensor.from([1, 2, 3], [3, 1]).transpose(0, 1).isContiguous()).toBe(true);
  });

  it("clone is dense and independent", () => {
    const t = Tensor.from(iota(6), [2, 3]).transpose(0, 1);
    const c = t.clone();
    expect(c.data).not.toBe(t.data);
    expect(c.isContiguous()).toBe(true);
    c.data[0] = 100;
    expect(t.get(0, 0)).toBe(0);
    t.data[1] = 50;
    expect(c.get(1, 0)).toBe(1);
    const plain = Tensor.from([1, 2], [2]);
    const pc = plain.clone();
    expect(pc.data).not.toBe(plain.data);
    pc.data[0] = 9;
    expect(plain.get(0)).toBe(1);
  });

  it("copyInto matches a naive index loop for strided and offset views of rank 1 to 5", () => {
    const buf = Float32Array.from({ length: 4000 }, (_, i) => i * 0.5 - 7);
    const views: [number[], number[], number][] = [
      [[7], [3], 5], // strided vector
      [[5], [-2], 20], // backwards
      [[3, 4], [1, 3], 2], // transposed matrix with offset
      [[4, 3], [10, 2], 11], // every other column of a wider matrix
      [[2, 3, 4], [1, 8, 2], 9], // permuted
      [[3, 1, 4], [20, 77, 5], 0], // size-1 dim with an odd stride
      [[2, 3, 2, 4], [1, 40, 2, 8], 3],
      [[2, 2, 3, 2, 3], [300, 2, 50, 1, 11], 17],
      [[2, 2, 2, 2, 2], [-1, 1000, 7, 100, 30], 1],
    ];
    for (const [shape, strides, offset] of views) {
      const t = new Tensor(buf, shape, strides, offset);
      const out = new Float32Array(t.size + 3).fill(-1);
      t.copyInto(out, 2);
      expect(Array.from(out.subarray(2, 2 + t.size)), `shape ${shape} strides ${strides}`).toEqual(naive(t));
      expect([out[0], out[1], out[out.length - 1]]).toEqual([-1, -1, -1]);
      expect(t.toArray()).toEqual(naive(t));
      expect(t.contiguous().toArray()).toEqual(naive(t));
    }
  });

  it("copyInto of a contiguous view with an offset copies just its elements", () => {
    const t = new Tensor(iota(10), [2, 2], [2, 1], 4);
    const out = new Float32Array(4);
    t.copyInto(out);
    expect(Array.from(out)).toEqual([4, 5, 6, 7]);
  });

  it("copyInto refuses an output that is too short", () => {
    const t = Tensor.from(iota(6), [2, 3]);
    expect(() => t.copyInto(new Float32Array(5))).toThrow(ShapeError);
    expect(() => t.transpose(0, 1).copyInto(new Float32Array(6), 1)).toThrow(ShapeError);
    expect(() => t.copyInto(new Float32Array(6), -1)).toThrow(ShapeError);
  });

  it("handles size-0 and scalar tensors", () => {
    const e = new Tensor(new Float32Array(0), [0, 4], [1, 100]);
    expect(e.toArray()).toEqual([]);
    expect(e.clone().shape).toEqual([0, 4]);
    expect(e.toNested()).toEqual([]);
    expect(Tensor.zeros([2, 0]).toNested()).toEqual([[], []]);
    const s = new Tensor(iota(4), [], [], 2);
    expect(s.size).toBe(1);
    expect(s.rank).toBe(0);
    expect(s.toArray()).toEqual([2]);
    expect(s.get()).toBe(2);
    expect(s.toNested()).toBe(2);
    expect(s.clone().data).toEqual(Float32Array.from([2]));
  });
});

describe("get and toNested", () => {
  it("get reads through strides and offset", () => {
    const t = new Tensor(iota(20), [2, 3], [1, 4], 5);
    expect(t.get(1, 2)).toBe(5 + 1 + 8);
    expect(t.get(0, 0)).toBe(5);
  });

  it("get checks the index", () => {
    const t = Tensor.zeros([2, 3]);
    expect(() => t.get(0)).toThrow(/2 indices/);
    expect(() => t.get(2, 0)).toThrow(/index 0 out of range/);
    expect(() => t.get(0, -1)).toThrow(ShapeError);
    expect(() => t.get(0, 0.5)).toThrow(ShapeError);
  });

  it("toNested round-trips fromNested, also for views", () => {
    const nested = [
      [
        [1, 2],
        [3, 4],
      ],
      [
        [5, 6],
        [7, 8],
      ],
    ];
    const t = Tensor.fromNested(nested);
    expect(t.toNested()).toEqual(nested);
    expect(t.permute([2, 0, 1]).toNested()).toEqual([
      [
        [1, 3],
        [5, 7],
      ],
      [
        [2, 4],
        [6, 8],
      ],
    ]);
  });

  it("toFloat32Array returns a fresh array", () => {
    const t = Tensor.from([1, 2], [2]);
    const a = t.toFloat32Array();
    a[0] = 5;
    expect(t.get(0)).toBe(1);
  });
});

/** torch's computeStride (aten/src/ATen/TensorUtils.cpp), written out independently as the reference for view(). */
function torchCanView(oldShape: readonly number[], oldStride: readonly number[], newShape: readonly number[]): boolean {
  if (oldShape.reduce((a, d) => a * d, 1) === 0) return true;
  let viewD = newShape.length - 1;
  let chunkBaseStride = oldStride[oldStride.length - 1] ?? 1;
  let tensorNumel = 1;
  let viewNumel = 1;
  for (let d = oldShape.length - 1; d >= 0; d--) {
    tensorNumel *= oldShape[d]!;
    if (d === 0 || (oldShape[d - 1] !== 1 && oldStride[d - 1] !== tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] === 1)) {
        viewNumel *= newShape[viewD]!;
        viewD--;
      }
      if (viewNumel !== tensorNumel) return false;
      if (d > 0) {
        chunkBaseStride = oldStride[d - 1]!;
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  return viewD === -1;
}

describe("view agrees with torch on random layouts", () => {
  it("is possible exactly where torch's computeStride allows it, and reads the same elements", () => {
    const next = mulberry32(12345);
    const rand = (n: number): number => Math.floor(next() * n);
    const shuffle = (a: number[]): number[] => {
      for (let i = a.length - 1; i > 0; i--) {
        const j = rand(i + 1);
        [a[i], a[j]] = [a[j]!, a[i]!];
      }
      return a;
    };
    const factorizations = (n: number): number[][] => {
      const out: number[][] = [[n]];
      for (let a = 2; a < n; a++) if (n % a === 0) for (const rest of factorizations(n / a)) out.push([a, ...rest]);
      return out;
    };
    let views = 0;
    let refusals = 0;
    for (let trial = 0; trial < 400; trial++) {
      const rank = 1 + rand(4);
      const shape = Array.from({ length: rank }, () => 1 + rand(4));
      const size = shape.reduce((a, d) => a * d, 1);
      // Half the time a slice of a larger buffer (x[:a, :b, ...]), so strides have gaps.
      const base = shape.map((d) => d + (rand(2) ? rand(2) : 0));
      let t = new Tensor(iota(base.reduce((a, d) => a * d, 1)), shape, Tensor.zeros(base).strides);
      const perm = shuffle([...shape.keys()]);
      t = t.permute(perm);
      const targets = factorizations(size).map((f) => (rand(2) ? [...f, 1] : f));
      for (const target of targets) {
        const expected = torchCanView(t.shape, t.strides, target);
        if (expected) {
          const v = t.view(target);
          expect(v.data).toBe(t.data);
          expect(naive(v)).toEqual(naive(t));
          views++;
        } else {
          expect(() => t.view(target), `${t.shape}/${t.strides} → ${target}`).toThrow(ShapeError);
          const r = t.reshape(target);
          expect(r.toArray()).toEqual(naive(t));
          refusals++;
        }
      }
    }
    expect(views).toBeGreaterThan(100);
    expect(refusals).toBeGreaterThan(100);
  });
});

describe("Tensor.isTensor", () => {
  it("recognises tensors by their brand, views included, and nothing that merely looks like one", () => {
    const t = Tensor.from([1, 2, 3, 4], [2, 2]);
    expect(Tensor.isTensor(t)).toBe(true);
    expect(Tensor.isTensor(t.transpose(0, 1))).toBe(true);
    const lookalike = { data: new Float32Array(4), shape: [2, 2], strides: [2, 1], offset: 0 };
    for (const v of [lookalike, { ...t }, null, undefined, 3, "tensor", [1, 2]]) expect(Tensor.isTensor(v)).toBe(false);
    // A tensor of a second copy of this package carries the same global brand.
    const other = { [Symbol.for("attngraph.tensor")]: true };
    expect(Tensor.isTensor(other)).toBe(true);
  });
});

describe("int32 tensors", () => {
  it("Tensor.int32 keeps integers exactly, views keep the dtype, copies keep it", () => {
    const t = Tensor.int32([2 ** 31 - 1, -(2 ** 31), 0, 7, 8, 9], [2, 3]);
    expect(t.dtype).toBe("int32");
    expect(t.toArray()).toEqual([2 ** 31 - 1, -(2 ** 31), 0, 7, 8, 9]);
    const v = t.transpose(0, 1);
    expect(v.dtype).toBe("int32");
    expect(v.clone().data).toBeInstanceOf(Int32Array);
    expect(v.toNested()).toEqual([[2 ** 31 - 1, 7], [-(2 ** 31), 8], [0, 9]]);
    expect(v.contiguous().toArray()).toEqual([2 ** 31 - 1, 7, -(2 ** 31), 8, 0, 9]);
    expect(Tensor.isTensor(t)).toBe(true);
    expect(Tensor.from([1.5], [1]).dtype).toBe("float32");
  });

  it("refuses values that are not int32 integers, naming the index", () => {
    expect(() => Tensor.int32([1, 2.5], [2])).toThrow(/Tensor.int32\[1\]: not an int32 value/);
    expect(() => Tensor.int32([2 ** 31], [1])).toThrow(/Tensor.int32\[0\]/);
    expect(() => Tensor.int32([NaN], [1])).toThrow(/Tensor.int32\[0\]/);
    expect(() => new Tensor([1, 2] as never, [2])).toThrow(/data must be a Float32Array or an Int32Array/);
  });

  it("prints like torch prints an integer tensor", () => {
    expect(Tensor.int32([3, 10, -1], [3]).toString()).toBe("tensor([ 3, 10, -1])");
  });
});
