// The backward kernels (sum-to, pad, linear-weight-grad, softmax-grad, mask-grad; those of rows and elements in
// backward-rows.test.ts), each against a float64 loop reference (test-backward64.ts) from the op declarations (packages/graph/src/ops): dense, transposed and spaced (offset,
// doubled strides, junk between) inputs, shapes past one workgroup or tile, the special values each op promises
// (fully masked softmax rows exactly 0, −∞ in mask-grad, NaN propagating), repeated ids, and the errors, which for bad
// ids and targets are those of the forward embedding and cross-entropy kernels.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";

import { values, expectClose, layouts, sumTo64, pad64, linearWeightGrad64, softmaxGrad64 } from "./test-backward64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

describe("sum-to", () => {
  const x = randomTensor([2, 3, 4], 1, 2);
  const cases: [string, number[]][] = [
    ["leading axes (a bias gradient)", [4]],
    ["a leading axis to 1", [1, 3, 4]],
    ["a middle axis to 1", [2, 1, 4]],
    ["the last axis to 1, one leading axis dropped", [3, 1]],
    ["everything to a scalar", []],
    ["everything to [1, 1, 1]", [1, 1, 1]],
    ["nothing (a copy)", [2, 3, 4]],
  ];
  for (const [label, out] of cases) {
    it(`${label}: [2, 3, 4] → [${out.join(", ")}], dense and strided`, async () => {
      for (const [layout, input] of await layouts(ops, x, [2, 0, 1])) {
        const got = await ops.run("sum-to", { shape: out }, [input], out);
        expect(got.shape).toEqual(out);
        expectClose(got, sumTo64(values(x), x.shape, out), `${label} ${layout}`);
      }
    });
  }

  it("GQA head groups [B, Hkv, g, S, D] → [B, Hkv, 1, S, D]; x with an axis of 1 kept", async () => {
    const q = randomTensor([2, 2, 3, 4, 5], 2);
    expectClose(
      await ops.run("sum-to", { shape: [2, 2, 1, 4, 5] }, [q], [2, 2, 1, 4, 5]),
      sumTo64(values(q), q.shape, [2, 2, 1, 4, 5]),
      "gqa",
    );
    const y = randomTensor([3, 1, 4], 3);
    expectClose(await ops.run("sum-to", { shape: [1, 4] }, [y], [1, 4]), sumTo64(values(y), y.shape, [1, 4]), "kept 1");
  });

  it("many terms per output (one workgroup each): [300, 7] → [7] and a strided [5, 80, 6] → [1, 6]", async () => {
    const a = randomTensor([300, 7], 4);
    expectClose(await ops.run("sum-to", { shape: [7] }, [a], [7]), sumTo64(values(a), a.shape, [7]), "[300, 7]");
    const b = randomTensor([5, 80, 6], 5);
    for (const [layout, input] of await layouts(ops, b, [2, 1, 0])) {
      expectClose(
        await ops.run("sum-to", { shape: [1, 6] }, [input], [1, 6]),
        sumTo64(values(b), b.shape, [1, 6]),
        `[5, 80, 6] ${layout}`,
      );
    }
  });

  it("an empty summed axis gives zeros; a shape x does not broadcast from is an error", async () => {
    expect(values(await ops.run("sum-to", { shape: [3] }, [Tensor.from([], [0, 3])], [3]))).toEqual([0, 0, 0]);
    await expect(ops.error("sum-to", { shape: [5] }, [x], [5], "db")).resolves.toMatchObject({
      code: "shape",
      subject: "db.shape",
    });
    await expect(ops.error("sum-to", { shape: [1, 2, 3, 4] }, [x], [1, 2, 3, 4], "db")).resolves.toMatchObject({
      code: "shape",
      subject: "db.shape",
    });
  });
});

describe("pad", () => {
  const x = randomTensor([2, 3, 4], 10);
  for (const [axis, before, after] of [
    [-1, 2, 1],
    [0, 1, 0],
    [1, 0, 3],
    [-2, 2, 2],
    [2, 0, 0],
  ] as const) {
    it(`axis ${axis}, before ${before}, after ${after}: dense and strided`, async () => {
      const want = pad64(values(x), x.shape, axis, before, after);
      const a = axis < 0 ? axis + 3 : axis;
      const out = x.shape.map((d, i) => (i === a ? before + d + after : d));
      for (const [layout, input] of await layouts(ops, x, [1, 2, 0])) {
        const got = await ops.run("pad", { axis, before, after }, [input], out);
        expect(got.shape).toEqual(out);
        expect({ layout, v: values(got) }).toEqual({ layout, v: want.map((v) => Math.fround(v)) });
      }
    });
  }

  it("errors: an axis out of range, a negative count", async () => {
    await expect(ops.error("pad", { axis: 3, before: 1, after: 0 }, [x], [2, 3, 5], "p")).resolves.toMatchObject({
      code: "attr",
      subject: "p.axis",
    });
    await expect(ops.error("pad", { axis: -4, before: 1, after: 0 }, [x], [2, 3, 5], "p")).resolves.toMatchObject({
      code: "attr",
      subject: "p.axis",
    });
    await expect(ops.error("pad", { axis: 0, before: -1, after: 0 }, [x], [1, 3, 4], "p")).resolves.toMatchObject({
      code: "attr",
      subject: "p.before",
    });
  });
});

describe("linear-weight-grad", () => {
  it("[2, 3, Out] and [2, 3, In]: dense, transposed (row stride only), non-collapsing leading axes (copied), spaced", async () => {
    const g = randomTensor([2, 3, 5], 20);
    const x = randomTensor([2, 3, 4], 21);
    const want = linearWeightGrad64(values(g), values(x), 5, 4);
    const variants: [string, Tensor | GpuTensor, Tensor | GpuTensor][] = [
      ["dense", g, x],
      ["last axis strided", await ops.permuted(g, [2, 0, 1]), await ops.permuted(x, [2, 0, 1])],
      ["leading axes swapped", await ops.permuted(g, [1, 0, 2]), await ops.permuted(x, [1, 0, 2])],
      ["spaced", await ops.spaced(g), await ops.spaced(x)],
      ["mixed", g, await ops.permuted(x, [1, 2, 0])],
    ];
    for (const [label, gi, xi] of variants)
      expectClose(await ops.run("linear-weight-grad", {}, [gi, xi], [5, 4]), want, label);
  });

  it("past one tile on every axis: rows 150, Out 70, In 65; and rank-1 inputs (one row)", async () => {
    const g = randomTensor([3, 50, 70], 22);
    const x = randomTensor([3, 50, 65], 23);
    expectClose(
      await ops.run("linear-weight-grad", {}, [g, x], [70, 65]),
      linearWeightGrad64(values(g), values(x), 70, 65),
      "150 rows",
      { abs: 1e-5, rel: 1e-4 },
    );
    const gt = await ops.permuted(g, [2, 0, 1]);
    expectClose(
      await ops.run("linear-weight-grad", {}, [gt, x], [70, 65]),
      linearWeightGrad64(values(g), values(x), 70, 65),
      "150 rows, grad strided",
      { abs: 1e-5, rel: 1e-4 },
    );
    const g1 = randomTensor([3], 24);
    const x1 = randomTensor([2], 25);
    expectClose(
      await ops.run("linear-weight-grad", {}, [g1, x1], [3, 2]),
      linearWeightGrad64(values(g1), values(x1), 3, 2),
      "rank 1",
    );
  });

  it("zero rows give zeros; mismatched leading axes are an error", async () => {
    expect(
      values(await ops.run("linear-weight-grad", {}, [Tensor.from([], [0, 2]), Tensor.from([], [0, 3])], [2, 3])),
    ).toEqual([0, 0, 0, 0, 0, 0]);
    await expect(
      ops.error("linear-weight-grad", {}, [randomTensor([2, 3, 5], 1), randomTensor([3, 2, 4], 2)], [5, 4], "dw"),
    ).resolves.toMatchObject({ code: "shape", subject: "dw.x" });
    await expect(
      ops.error("linear-weight-grad", {}, [randomTensor([2, 3, 5], 1), randomTensor([6, 4], 2)], [5, 4], "dw"),
    ).resolves.toMatchObject({ code: "shape", subject: "dw.x" });
  });
});

describe("softmax-grad", () => {
  /** Rows of a softmax (positive, summing to 1) with some entries exactly 0 (masked keys). */
  function softmaxRows(shape: number[], seed: number): Tensor {
    const s = shape[shape.length - 1]!;
    const raw = values(randomTensor(shape, seed, 3));
    const out: number[] = [];
    for (let o = 0; o < raw.length; o += s) {
      const e = raw.slice(o, o + s).map((v, j) => ((o / s + j) % 4 === 3 ? 0 : Math.exp(v)));
      const sum = e.reduce((a, v) => a + v, 0);
      out.push(...e.map((v) => v / sum));
    }
    return Tensor.from(out, shape);
  }

  for (const [label, shape] of [
    ["[2, 3, 5]", [2, 3, 5]],
    ["[2, 2, 3, 150] (past one workgroup)", [2, 2, 3, 150]],
  ] as const) {
    it(`${label}, scale 0.5: dense and strided`, async () => {
      const y = softmaxRows([...shape], 30);
      const g = randomTensor([...shape], 31);
      const want = softmaxGrad64(values(y), values(g), shape[shape.length - 1]!, 0.5);
      const perm = shape.length === 3 ? [2, 0, 1] : [3, 1, 0, 2];
      const ys = await layouts(ops, y, perm);
      const gs = await layouts(ops, g, perm);
      for (let k = 0; k < ys.length; k++) {
        expectClose(
          await ops.run("softmax-grad", { scale: 0.5 }, [ys[k]![1], gs[(k + 1) % gs.length]![1]], [...shape]),
          want,
          `${ys[k]![0]} y`,
        );
      }
    });
  }

  it("a fully masked row (y all 0) gives exactly +0, whatever grad; NaN in y or grad propagates to its row", async () => {
    const y = Tensor.from([0, 0, 0, 0, 0.25, 0.75, 0, 0], [2, 4]);
    const g = Tensor.from([-3, 5, -1e30, 2, 1, -2, 3, 4], [2, 4]);
    const got = values(await ops.run("softmax-grad", { scale: 2 }, [y, g], [2, 4]));
    expect(
      got.slice(0, 4).every((v) => Object.is(v, 0)),
      String(got),
    ).toBe(true);
    expectClose(Tensor.from(got, [2, 4]), softmaxGrad64(values(y), values(g), 4, 2), "masked row");
    const yn = Tensor.from([0.5, Number.NaN, 0.5, 0, 0.5, 0.5], [2, 3]);
    const gn = Tensor.from([1, 2, 3, 1, Number.NaN, 2], [2, 3]);
    const nan = values(await ops.run("softmax-grad", { scale: 1 }, [yn, gn], [2, 3]));
    expect(nan.map((v) => Number.isNaN(v))).toEqual([true, true, true, true, true, true]);
  });

  it("errors: shapes that differ, a non-finite scale", async () => {
    await expect(
      ops.error("softmax-grad", { scale: 1 }, [randomTensor([2, 3], 1), randomTensor([3, 2], 1)], [2, 3], "sg"),
    ).resolves.toMatchObject({ code: "shape", subject: "sg.grad" });
    await expect(
      ops.error(
        "softmax-grad",
        { scale: Number.NaN },
        [randomTensor([2, 3], 1), randomTensor([2, 3], 1)],
        [2, 3],
        "sg",
      ),
    ).resolves.toMatchObject({ code: "attr", subject: "sg.scale" });
  });
});

describe("mask-grad", () => {
  it("0 where masked is −∞, scale · grad elsewhere (a NaN or +∞ in masked included): dense and strided", async () => {
    const m = values(randomTensor([2, 3, 4], 40));
    const special = m.map((v, k) => (k % 5 === 0 ? -Infinity : k === 7 ? Number.NaN : k === 8 ? Infinity : v));
    const masked = Tensor.from(special, [2, 3, 4]);
    const g = randomTensor([2, 3, 4], 41);
    const want = special.map((v, k) => (v === -Infinity ? 0 : 0.25 * values(g)[k]!));
    const ms = await layouts(ops, masked, [2, 1, 0]);
    const gs = await layouts(ops, g, [1, 2, 0]);
    for (let k = 0; k < ms.length; k++) {
      const got = values(await ops.run("mask-grad", { scale: 0.25 }, [gs[k]![1], ms[(k + 2) % 3]![1]], [2, 3, 4]));
      expect(got, `${gs[k]![0]} grad`).toEqual(want.map((v) => Math.fround(v)));
      got.forEach((v, i) => special[i] === -Infinity && expect(Object.is(v, 0)).toBe(true));
    }
  });

  it("errors: shapes that differ", async () => {
    await expect(
      ops.error("mask-grad", { scale: 1 }, [randomTensor([2, 3], 1), randomTensor([2, 4], 1)], [2, 3], "mg"),
    ).resolves.toMatchObject({ code: "shape", subject: "mg.masked" });
  });
});
