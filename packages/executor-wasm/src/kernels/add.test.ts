// add on wasm against a float64 broadcasting add written here (float32 a + b is the float64 sum rounded once, so the
// results must be exact): the block's cases (residual, a [E] bias, pos_embed [1, T, E] over the batch), both inputs
// stretching, more axes on either side, scalars, strided views on both sides, layouts that do not merge to [rows, n]
// (walked on the host), odd row lengths (the vector tail), and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor } from "../test-util.js";
import { mergeAxes } from "./add.js";

const ex = await wasmExecutor();

/** NumPy broadcasting a + b in float64: the shape and the row-major values. */
function add64(a: Tensor, b: Tensor): { shape: number[]; data: Float64Array } {
  const n = Math.max(a.rank, b.rank);
  const as = [...new Array<number>(n - a.rank).fill(1), ...a.shape];
  const bs = [...new Array<number>(n - b.rank).fill(1), ...b.shape];
  const shape = as.map((d, i) => (d === 1 ? bs[i]! : d));
  const av = f64(a);
  const bv = f64(b);
  const size = shape.reduce((p, d) => p * d, 1);
  const data = new Float64Array(size);
  for (let f = 0; f < size; f++) {
    let ia = 0;
    let ib = 0;
    for (let k = 0, rest = f, span = size; k < n; k++) {
      span /= shape[k]!;
      const i = Math.floor(rest / span);
      rest -= i * span;
      ia = ia * as[k]! + (as[k] === 1 ? 0 : i);
      ib = ib * bs[k]! + (bs[k] === 1 ? 0 : i);
    }
    data[f] = av[ia]! + bv[ib]!;
  }
  return { shape, data };
}

function expectAdd(a: Tensor, b: Tensor, views: boolean): void {
  const want = add64(a, b);
  const got = (views ? onWasmViews : onWasm)(ex, "add", {}, [a, b], want.shape);
  expect(got.shape).toEqual(want.shape);
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(Float32Array.from(want.data)));
}

describe("add on wasm", () => {
  const cases: [string, number[], number[]][] = [
    ["a residual: same shape", [2, 7, 9], [2, 7, 9]],
    ["a bias [E] over [B, T, E]", [2, 7, 9], [9]],
    ["pos_embed [1, T, E] + x [B, T, E]", [1, 7, 9], [3, 7, 9]],
    ["x [B, T, E] + pos_embed [1, T, E]", [3, 7, 9], [1, 7, 9]],
    ["both stretch: [2, 1, 5] + [1, 3, 1]", [2, 1, 5], [1, 3, 1]],
    ["b has more axes: [3, 4] + [2, 3, 4]", [3, 4], [2, 3, 4]],
    ["a column: [6, 1] + [6, 10]", [6, 1], [6, 10]],
    ["a scalar [] + [5, 3]", [], [5, 3]],
    ["[5, 3] + a scalar [1]", [5, 3], [1]],
    ["rank 5 with stretches everywhere", [2, 1, 3, 1, 5], [1, 4, 1, 2, 5]],
    ["a long row: [2, 1031] + [1031]", [2, 1031], [1031]],
  ];
  for (const [label, as, bs] of cases) {
    it(`${label}: exact`, () => {
      expectAdd(random(as, as.length * 10 + 1), random(bs, bs.length * 10 + 2), false);
    });
  }

  it("strided views on either side and both (permuted, transposed, with an offset)", () => {
    const a = random([9, 7, 2], 1).permute([2, 1, 0]); // [2, 7, 9], nothing contiguous
    const bias = new Tensor(random([20], 2).data, [9], [2], 1); // [E] read with stride 2 from offset 1
    const pos = random([1, 9, 7], 3).permute([0, 2, 1]); // [1, 7, 9], strided
    expectAdd(a, bias, true);
    expectAdd(a, pos, true);
    expectAdd(pos, a, true);
    expectAdd(random([2, 7, 9], 4), pos, true);
    expectAdd(a, random([2, 7, 9], 5).permute([0, 1, 2]), true);
  });

  it("layouts that do not merge walk the outer axes on the host", () => {
    const a = random([3, 4, 5, 6, 7], 6).permute([4, 2, 0, 3, 1]); // [7, 5, 3, 6, 4]
    const b = random([7, 1, 3, 1, 4], 7);
    expectAdd(a, b, true);
    expectAdd(b, a, true);
  });

  it("merges axes only where both inputs allow it", () => {
    // [B, T, E] + [1, T, E] → [B, T·E]; [B, T, E] + [E] → [B·T, E]
    expect(mergeAxes([2, 3, 4], [12, 4, 1], [0, 4, 1])).toEqual([
      { n: 2, sa: 12, sb: 0 },
      { n: 12, sa: 1, sb: 1 },
    ]);
    expect(mergeAxes([2, 3, 4], [12, 4, 1], [0, 0, 1])).toEqual([
      { n: 6, sa: 4, sb: 0 },
      { n: 4, sa: 1, sb: 1 },
    ]);
    expect(mergeAxes([1, 3, 1], [3, 1, 1], [0, 0, 0])).toEqual([{ n: 3, sa: 1, sb: 0 }]);
  });

  it("NaN and infinities add as IEEE says", () => {
    const a = Tensor.from([NaN, Infinity, -Infinity, Infinity, 1], [5]);
    const b = Tensor.from([1, 1, 1, -Infinity, -0], [5]);
    const got = onWasm(ex, "add", {}, [a, b], [5]).toFloat32Array();
    expect(Array.from(got)).toEqual([NaN, Infinity, -Infinity, NaN, 1]);
  });

  it("an empty broadcast gives an empty output", () => {
    expect(onWasm(ex, "add", {}, [random([0, 4], 1), random([4], 2)], [0, 4]).size).toBe(0);
  });

  it("errors name the node and field: shapes that do not broadcast, a wrong outShape, an int32 input", () => {
    const a = ex.upload(random([2, 3], 1));
    const b = ex.upload(random([4], 2));
    const call = (inputs: unknown[], outShape: number[]) =>
      thrown(() =>
        ex.dispatch({ kind: "add", node: "blocks.0.residual", attrs: {}, inputs: inputs as never, outShape }),
      );
    const e1 = call([a, b], [2, 3]) as AttnGraphError;
    expect(AttnGraphError.isInstance(e1)).toBe(true);
    expect(e1.message).toMatch(
      /^blocks\.0\.residual\.b: shapes do not broadcast at axis 0 from the end, expected 3 or 1, got 4/,
    );
    expect((call([a, ex.upload(random([3], 3))], [3, 3]) as Error).message).toMatch(
      /^blocks\.0\.residual\.outShape: the output shape of op add/,
    );
    expect((call([a, ex.upload(Tensor.int32([1, 2, 3], [3]))], [2, 3]) as Error).message).toMatch(
      /^blocks\.0\.residual\.b: .*wrong dtype, expected float32, got int32/,
    );
    expect((call([a], [2, 3]) as Error).message).toMatch(/^blocks\.0\.residual\.b: missing required input 1/);
  });
});
