import { describe, expect, it } from "vitest";
import { copyStrided } from "./copy-strided.js";
import { Tensor } from "./tensor.js";

/** The row-major elements of a view by explicit index arithmetic, one element at a time. */
function naive(t: Tensor | Tensor<"int32">): number[] {
  const out: number[] = [];
  const idx = new Array<number>(t.rank).fill(0);
  for (let n = 0; n < t.size; n++) {
    let rest = n;
    for (let d = t.rank - 1; d >= 0; d--) {
      idx[d] = rest % t.shape[d]!;
      rest = Math.floor(rest / t.shape[d]!);
    }
    out.push(t.data[t.offset + idx.reduce((a, i, d) => a + i * t.strides[d]!, 0)]!);
  }
  return out;
}

describe("copyStrided", () => {
  // Sizes around the 64-element tile (a partial tile at each edge), several ranks, an offset into the buffer.
  it.each([
    [
      [130, 67],
      [1, 0],
    ],
    [
      [64, 64],
      [1, 0],
    ],
    [
      [3, 70, 65],
      [0, 2, 1],
    ],
    [
      [2, 3, 5, 66],
      [3, 1, 0, 2],
    ],
    [
      [1, 200],
      [1, 0],
    ],
  ])("a permuted view of %j (perm %j) equals the element-by-element copy", (shape, perm) => {
    const size = shape.reduce((a, d) => a * d, 1);
    const data = Float32Array.from({ length: size + 7 }, (_, i) => i * 0.5 - 3);
    const view = new Tensor(data, shape, undefined, 7).permute(perm);
    const out = new Float32Array(size + 3);
    copyStrided(view, out, 3);
    expect(Array.from(out.subarray(3))).toEqual(naive(view));
    expect(Array.from(out.subarray(0, 3))).toEqual([0, 0, 0]); // nothing before `at` written
    expect(Array.from(view.clone().data)).toEqual(naive(view));
  });

  it("copies int32 views and unit-stride rows with a strided outer dim", () => {
    const ints = Tensor.int32(
      Array.from({ length: 96 }, (_, i) => i * 3),
      [8, 12],
    );
    expect(Array.from(ints.transpose(0, 1).clone().data)).toEqual(naive(ints.transpose(0, 1)));
    const rows = new Tensor(
      Float32Array.from({ length: 96 }, (_, i) => i),
      [4, 6],
      [24, 1],
      2,
    ); // every 4th row of 6
    expect(Array.from(rows.clone().data)).toEqual(naive(rows));
  });
});

describe("Tensor.snapshot", () => {
  it("copies a transpose of a dense tensor as it lies (same strides), sharing nothing", () => {
    const base = Tensor.from(
      Array.from({ length: 12 }, (_, i) => i),
      [3, 4],
    );
    const t = base.transpose(0, 1); // [4, 3], strides [1, 4]
    const s = t.snapshot();
    expect(s.strides).toEqual([1, 4]);
    expect(s.toNested()).toEqual(t.toNested());
    base.data[5] = 99;
    expect(s.get(1, 1)).toBe(5); // the snapshot does not see the change
  });

  it("clones any other view dense row-major", () => {
    const base = Tensor.from(
      Array.from({ length: 24 }, (_, i) => i),
      [4, 6],
    );
    const every2nd = new Tensor(base.data, [2, 6], [12, 1]);
    const s = every2nd.snapshot();
    expect(s.strides).toEqual([6, 1]);
    expect(s.toNested()).toEqual(every2nd.toNested());
  });
});
