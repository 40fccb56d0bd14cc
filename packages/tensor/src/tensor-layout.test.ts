// Tensor layouts: contiguous copies, element access, view agreeing with torch on random layouts, int32 tensors.
import { describe, expect, it } from "vitest";
import { ShapeError } from "./errors.js";
import { Tensor } from "./tensor.js";
// The project's one seeded generator, by path: @attngraph/testkit depends on this package, so it cannot be a
// devDependency here (a cycle turbo refuses). prng.ts imports nothing, so nothing else of testkit comes along.
import { mulberry32 } from "./prng.js";

import { iota, naive } from "./test-views.js";

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
    expect(v.toNested()).toEqual([
      [2 ** 31 - 1, 7],
      [-(2 ** 31), 8],
      [0, 9],
    ]);
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
