// The backward kernels of rows and elements (layer norms, relu's and gelu's gradients, embedding, cross-entropy, rope's
// inverse) against float64 references: see backward.test.ts.
import { pointwiseGrad, reluOp, type Expr } from "@attngraph/graph";
import { afterAll, describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";

import {
  values,
  sizeOf,
  expectClose,
  layouts,
  layerNormGrad64,
  layerNormWeightGrad64,
  geluGrad64,
  embeddingGrad64,
  crossEntropyGrad64,
  rope64,
} from "./test-backward64.js";

/** relu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, relu's input in x1). */
const RELU_GRAD = { expr: (pointwiseGrad(reluOp.pointwise!({}), 0) as { expr: Expr }).expr };

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

describe("layer-norm-grad and layer-norm-weight-grad", () => {
  for (const [label, shape] of [
    ["[2, 3, 8]", [2, 3, 8]],
    ["[3, 200] (past one workgroup)", [3, 200]],
  ] as const) {
    it(`${label}: dx with and without weight, dW, dense and strided`, async () => {
      const e = shape[shape.length - 1]!;
      // Rows far from 0, so the statistics' shift matters.
      const x = Tensor.from(
        values(randomTensor([...shape], 50, 2)).map((v) => v + 30),
        [...shape],
      );
      const g = randomTensor([...shape], 51);
      const w = randomTensor([e], 52, 1.5);
      const perm = shape.length === 3 ? [2, 0, 1] : [1, 0];
      const xs = await layouts(ops, x, perm);
      const gs = await layouts(ops, g, perm);
      const tol = { abs: 1e-4, rel: 1e-4 };
      for (let k = 0; k < xs.length; k++) {
        const [lx, xi] = xs[k]!;
        const gi = gs[(k + 1) % 3]![1];
        expectClose(
          await ops.run("layer-norm-grad", { eps: 1e-5 }, [gi, xi, w], [...shape]),
          layerNormGrad64(values(g), values(x), e, 1e-5, values(w)),
          `dx weight ${lx}`,
          tol,
        );
        expectClose(
          await ops.run("layer-norm-grad", { eps: 1e-3 }, [gi, xi], [...shape]),
          layerNormGrad64(values(g), values(x), e, 1e-3),
          `dx ${lx}`,
          tol,
        );
        expectClose(
          await ops.run("layer-norm-weight-grad", { eps: 1e-5 }, [gi, xi], [e]),
          layerNormWeightGrad64(values(g), values(x), e, 1e-5),
          `dW ${lx}`,
          tol,
        );
      }
    });
  }

  it("dW over many rows ([300, 6]); a strided weight; a constant row gives dx = 0 without NaN", async () => {
    const x = randomTensor([300, 6], 53);
    const g = randomTensor([300, 6], 54);
    expectClose(
      await ops.run("layer-norm-weight-grad", { eps: 1e-5 }, [g, x], [6]),
      layerNormWeightGrad64(values(g), values(x), 6, 1e-5),
      "300 rows",
      { abs: 1e-4, rel: 1e-4 },
    );
    const w = randomTensor([6], 55);
    const xc = Tensor.from([...new Array<number>(6).fill(3), ...values(randomTensor([6], 56))], [2, 6]);
    const gc = randomTensor([2, 6], 57);
    const got = await ops.run("layer-norm-grad", { eps: 1e-5 }, [gc, xc, await ops.spaced(w)], [2, 6]);
    expectClose(got, layerNormGrad64(values(gc), values(xc), 6, 1e-5, values(w)), "constant row", {
      abs: 1e-3,
      rel: 1e-4,
    });
  });

  it("errors: shapes that differ, a weight of the wrong length, eps <= 0", async () => {
    const x = randomTensor([2, 4], 1);
    await expect(
      ops.error("layer-norm-grad", { eps: 1e-5 }, [randomTensor([2, 3], 1), x], [2, 4], "ln"),
    ).resolves.toMatchObject({ code: "shape", subject: "ln.x" });
    await expect(
      ops.error("layer-norm-grad", { eps: 1e-5 }, [x, x, randomTensor([3], 1)], [2, 4], "ln"),
    ).resolves.toMatchObject({ code: "shape", subject: "ln.weight" });
    await expect(ops.error("layer-norm-weight-grad", { eps: 0 }, [x, x], [4], "ln")).resolves.toMatchObject({
      code: "attr",
      subject: "ln.eps",
    });
  });
});

describe("relu's derived gradient (the pointwise kernel)", () => {
  it("grad where y > 0 or NaN, exactly 0 where y <= 0 (a NaN or infinite grad there included); strided", async () => {
    const y = Tensor.from([0, -0, Number.NaN, Infinity, 1e-30, 2.5, 0, 3, 0, 7], [10]);
    const g = Tensor.from([1.5, -2, 3, -4, 5, -6, Number.NaN, Number.NaN, Infinity, 8], [10]);
    const got = values(await ops.run("pointwise", RELU_GRAD, [g, y], y.shape));
    expect(got).toEqual([0, 0, 3, -4, 5, -6, 0, Number.NaN, 0, 8]);
    expect(got.slice(0, 2).map((v) => Object.is(v, 0))).toEqual([true, true]);
    const y2 = Tensor.from(
      values(randomTensor([5, 6], 63, 3)).map((v) => Math.max(v, 0)),
      [5, 6],
    );
    const g2 = randomTensor([5, 6], 64);
    const want2 = values(y2).map((v, k) => (v <= 0 ? 0 : values(g2)[k]!));
    for (const [layout, yi] of await layouts(ops, y2, [1, 0]))
      expectClose(await ops.run("pointwise", RELU_GRAD, [await ops.spaced(g2), yi], [5, 6]), want2, layout, {
        abs: 0,
        rel: 0,
      });
  });

  it("errors: shapes that differ", async () => {
    const x = randomTensor([2, 3], 1);
    await expect(ops.error("pointwise", RELU_GRAD, [x, randomTensor([3, 2], 1)], [2, 3], "act")).resolves.toMatchObject(
      { code: "shape", subject: "act.x1" },
    );
  });
});

describe("gelu-grad", () => {
  const line = [...Array.from({ length: 401 }, (_, i) => -10 + i * 0.05), -1e-3, 1e-3, 0, 10.5, -10.5];
  for (const approximate of ["none", "tanh"] as const) {
    it(`${approximate}: -10..10 vs float64; far values give 1 or 0; NaN stays NaN; strided`, async () => {
      const x = Tensor.from(line, [line.length]);
      const g = randomTensor([line.length], 60, 2);
      const want = values(x).map((v, k) => values(g)[k]! * geluGrad64(v, approximate));
      expectClose(await ops.run("gelu-grad", { approximate }, [g, x], x.shape), want, approximate, {
        abs: 1e-5,
        rel: 1e-5,
      });
      const far = [30, -30, 1e4, -1e4, 3e38, -3e38, Infinity, -Infinity];
      const ones = Tensor.from(new Array<number>(far.length).fill(1), [far.length]);
      const big = values(
        await ops.run("gelu-grad", { approximate }, [ones, Tensor.from(far, [far.length])], [far.length]),
      );
      far.forEach((v, k) => expect(big[k], `gelu'(${v})`).toBeCloseTo(v > 0 ? 1 : 0, 6));
      const nan = values(
        await ops.run(
          "gelu-grad",
          { approximate },
          [Tensor.from([1, Number.NaN], [2]), Tensor.from([Number.NaN, 1], [2])],
          [2],
        ),
      );
      expect(nan.map(Number.isNaN)).toEqual([true, true]);
      const x2 = randomTensor([5, 6], 61, 4);
      const g2 = randomTensor([5, 6], 62);
      const want2 = values(x2).map((v, k) => values(g2)[k]! * geluGrad64(v, approximate));
      for (const [layout, xi] of await layouts(ops, x2, [1, 0]))
        expectClose(
          await ops.run("gelu-grad", { approximate }, [await ops.spaced(g2), xi], [5, 6]),
          want2,
          `${approximate} ${layout}`,
        );
    });
  }

  it("errors: an unknown approximate, shapes that differ", async () => {
    const x = randomTensor([2, 3], 1);
    await expect(ops.error("gelu-grad", { approximate: "fast" }, [x, x], [2, 3], "act")).resolves.toMatchObject({
      code: "attr",
      subject: "act.approximate",
    });
    await expect(
      ops.error("gelu-grad", { approximate: "none" }, [x, randomTensor([3, 2], 1)], [2, 3], "act"),
    ).resolves.toMatchObject({ code: "shape", subject: "act.x" });
  });
});

describe("embedding-grad", () => {
  const V = 7;
  const E = 5;

  it("repeated ids accumulate, unnamed rows are exactly 0; ids [B, T], [N] and []", async () => {
    for (const [ids, shape] of [
      [
        [6, 0, 3, 3, 1, 6],
        [2, 3],
      ],
      [[2, 2, 2, 2], [4]],
      [[4], []],
    ] as const) {
      const g = randomTensor([...shape, E], 70);
      const got = await ops.run("embedding-grad", { rows: V }, [Tensor.int32(ids, shape), g], [V, E]);
      expect(got.shape).toEqual([V, E]);
      const want = embeddingGrad64(ids, values(g), V, E);
      expectClose(got, want, `ids [${shape.join(", ")}]`);
      values(got).forEach((v, k) => want[k] === 0 && expect(Object.is(v, 0)).toBe(true));
    }
  });

  it("strided, offset ids and grad; many positions on one id; a large table", async () => {
    const t = [1, 5, 2, 6, 1, 4];
    const ids = Tensor.int32(t, [2, 3]);
    const g = randomTensor([2, 3, E], 71);
    const want = embeddingGrad64(t, values(g), V, E);
    for (const idv of [await ops.permuted(ids, [1, 0]), await ops.spaced(ids)]) {
      for (const [layout, gi] of await layouts(ops, g, [2, 0, 1]))
        expectClose(await ops.run("embedding-grad", { rows: V }, [idv, gi], [V, E]), want, layout);
    }
    const many = Array.from({ length: 600 }, (_, k) => (k % 3 === 0 ? 3 : (k * 7) % 1000));
    const gm = randomTensor([600, 4], 72);
    expectClose(
      await ops.run("embedding-grad", { rows: 1000 }, [Tensor.int32(many, [600]), gm], [1000, 4]),
      embeddingGrad64(many, values(gm), 1000, 4),
      "600 positions",
      { abs: 1e-5, rel: 1e-4 },
    );
  });

  it("an id of V or -1 is the forward embedding's error (node, position, id), without a readback for an upload", async () => {
    const table = randomTensor([V, E], 73);
    const g = randomTensor([2, 3, E], 74);
    for (const bad of [V, -1, 2 ** 31 - 1]) {
      const ids = await webgpu.upload(Tensor.int32([0, 1, 2, bad, 0, 0], [2, 3]));
      const before = webgpu.stats.readbacks;
      const e = await ops.error("embedding-grad", { rows: V }, [ids, g], [V, E], "wte");
      expect(webgpu.stats.readbacks - before, "no readback for an upload").toBe(0);
      expect(e).toMatchObject({
        code: "input",
        subject: "wte.ids",
        got: `${bad} at [1, 0]`,
        expected: `token id in [0, ${V})`,
      });
      const forward = await ops.error("embedding", {}, [ids, table], [2, 3, E], "wte");
      expect(AttnGraphError.isInstance(e) && AttnGraphError.isInstance(forward)).toBe(true);
      expect((e as AttnGraphError).message).toBe((forward as AttnGraphError).message);
    }
    const view = await ops.permuted(Tensor.int32([0, 1, 2, 9, 3, 4], [3, 2]), [1, 0]);
    await expect(
      ops.error("embedding-grad", { rows: V }, [view, randomTensor([3, 2, E], 1)], [V, E], "wte"),
    ).resolves.toMatchObject({ subject: "wte.ids", got: "9 at [1, 1]" });
  });

  it("errors: float32 ids, a grad that does not match the ids, rows < 1", async () => {
    const g = randomTensor([2, E], 1);
    await expect(
      ops.error("embedding-grad", { rows: V }, [Tensor.from([0, 1], [2]), g], [V, E], "wte"),
    ).resolves.toMatchObject({ code: "input", subject: "wte.ids", expected: "int32", got: "float32" });
    await expect(
      ops.error("embedding-grad", { rows: V }, [Tensor.int32([0, 1, 2], [3]), g], [V, E], "wte"),
    ).resolves.toMatchObject({ code: "shape", subject: "wte.grad" });
    await expect(
      ops.error("embedding-grad", { rows: V }, [Tensor.int32([0, 1], [2]), randomTensor([2], 1)], [V, E], "wte"),
    ).resolves.toMatchObject({ code: "shape", subject: "wte.grad" });
    await expect(
      ops.error("embedding-grad", { rows: 0 }, [Tensor.int32([0, 1], [2]), g], [0, E], "wte"),
    ).resolves.toMatchObject({ code: "attr", subject: "wte.rows" });
  });
});

describe("cross-entropy-grad", () => {
  const attrs = (reduction: "mean" | "sum" | "none", ignoreIndex: number | null = null): Record<string, unknown> => ({
    reduction,
    ignoreIndex,
  });

  for (const [label, shape] of [
    ["[6, 5]", [6, 5]],
    ["[2, 3, 150] (past one workgroup)", [2, 3, 150]],
  ] as const) {
    it(`${label}: each reduction, with and without grad, with ignoreIndex`, async () => {
      const v = shape[shape.length - 1]!;
      const lead = shape.slice(0, -1);
      const logits = randomTensor([...shape], 80, 3);
      const t = Array.from({ length: sizeOf(lead) }, (_, k) => (k % 4 === 1 ? -100 : (k * 7 + 3) % v));
      const targets = Tensor.int32(t, lead);
      for (const reduction of ["mean", "sum", "none"] as const) {
        const g = reduction === "none" ? randomTensor(lead, 81, 2) : Tensor.from([1.7], []);
        for (const ignoreIndex of [null, -100]) {
          const tt = ignoreIndex === null ? t.map((c) => (c < 0 ? 0 : c)) : t;
          const tg = Tensor.int32(tt, lead);
          expectClose(
            await ops.run("cross-entropy-grad", attrs(reduction, ignoreIndex), [logits, tg, g], [...shape]),
            crossEntropyGrad64(values(logits), v, tt, reduction, ignoreIndex, values(g)),
            `${reduction} ignore ${ignoreIndex}`,
          );
          expectClose(
            await ops.run("cross-entropy-grad", attrs(reduction, ignoreIndex), [logits, tg], [...shape]),
            crossEntropyGrad64(values(logits), v, tt, reduction, ignoreIndex),
            `${reduction} ignore ${ignoreIndex}, no grad`,
          );
        }
        const got = values(
          await ops.run("cross-entropy-grad", attrs(reduction, -100), [logits, targets, g], [...shape]),
        );
        t.forEach((c, p) => c === -100 && expect(got.slice(p * v, p * v + v).every((x) => Object.is(x, 0))).toBe(true));
      }
    });
  }

  it("strided logits, targets and grad; all ignored under mean gives zeros; logits of 1e4; NaN rows", async () => {
    const logits = randomTensor([3, 4, 9], 82, 2);
    const t = [0, 8, 4, 4, 1, 7, 2, 3, 6, 5, 8, 0];
    const targets = Tensor.int32(t, [3, 4]);
    const g = randomTensor([3, 4], 83);
    const want = crossEntropyGrad64(values(logits), 9, t, "none", null, values(g));
    for (const [layout, li] of await layouts(ops, logits, [2, 0, 1])) {
      expectClose(
        await ops.run(
          "cross-entropy-grad",
          attrs("none"),
          [li, await ops.permuted(targets, [1, 0]), await ops.spaced(g)],
          [3, 4, 9],
        ),
        want,
        layout,
      );
    }
    const meanWant = crossEntropyGrad64(values(logits), 9, t, "mean", null, [0.5]);
    expectClose(
      await ops.run(
        "cross-entropy-grad",
        attrs("mean"),
        [logits, await ops.spaced(targets), await ops.spaced(Tensor.from([0.5], []))],
        [3, 4, 9],
      ),
      meanWant,
      "mean, spaced",
    );
    const none = Tensor.int32(new Array<number>(12).fill(-1), [3, 4]);
    const zeros = values(await ops.run("cross-entropy-grad", attrs("mean", -1), [logits, none], [3, 4, 9]));
    expect(zeros.every((x) => Object.is(x, 0))).toBe(true);
    const huge = Tensor.from([1e4, -1e4, 0, 1e4, 1e4, -1e4], [2, 3]);
    expectClose(
      await ops.run("cross-entropy-grad", attrs("sum"), [huge, Tensor.int32([1, 0], [2])], [2, 3]),
      crossEntropyGrad64(values(huge), 3, [1, 0], "sum", null),
      "1e4",
    );
    const special = Tensor.from([1, Number.NaN, 0, -Infinity, -Infinity, -Infinity, 2, -Infinity, 1], [3, 3]);
    const s = values(
      await ops.run("cross-entropy-grad", attrs("none"), [special, Tensor.int32([0, 1, 0], [3])], [3, 3]),
    );
    expect(s.slice(0, 6).every(Number.isNaN), "a NaN logit, a row of −∞").toBe(true);
    expectClose(
      Tensor.from(s.slice(6), [3]),
      crossEntropyGrad64([2, -Infinity, 1], 3, [0], "none", null),
      "a −∞ logit",
    );
  });

  it("a target out of range is the forward cross-entropy's error; the grad's shape is checked", async () => {
    const logits = randomTensor([2, 3, 4], 84);
    for (const [t, ignoreIndex] of [
      [[0, 1, 4, 2, 3, 0], null],
      [[0, 1, -1, 2, 3, 0], -100],
    ] as const) {
      const targets = await webgpu.upload(Tensor.int32(t, [2, 3]));
      for (const reduction of ["mean", "none"] as const) {
        const e = await ops.error(
          "cross-entropy-grad",
          attrs(reduction, ignoreIndex),
          [logits, targets],
          [2, 3, 4],
          "loss",
        );
        const forward = await ops.error(
          "cross-entropy",
          attrs(reduction, ignoreIndex),
          [logits, targets],
          reduction === "none" ? [2, 3] : [],
          "loss",
        );
        expect(e).toMatchObject({ code: "input", subject: "loss.targets", got: `${t[2]} at [0, 2]` });
        expect(AttnGraphError.isInstance(forward)).toBe(true);
        expect((e as AttnGraphError).message).toBe((forward as AttnGraphError).message);
      }
    }
    const targets = Tensor.int32([0, 1, 2, 3, 0, 1], [2, 3]);
    await expect(
      ops.error("cross-entropy-grad", attrs("mean"), [logits, targets, Tensor.from([1, 2], [2])], [2, 3, 4], "loss"),
    ).resolves.toMatchObject({ code: "shape", subject: "loss.grad" });
    await expect(
      ops.error("cross-entropy-grad", attrs("none"), [logits, targets, Tensor.from([1, 2, 3], [3])], [2, 3, 4], "loss"),
    ).resolves.toMatchObject({ code: "shape", subject: "loss.grad" });
    await expect(
      ops.error(
        "cross-entropy-grad",
        attrs("none"),
        [logits, Tensor.from([0, 1, 2, 3, 0, 1], [2, 3])],
        [2, 3, 4],
        "loss",
      ),
    ).resolves.toMatchObject({ code: "input", subject: "loss.targets", expected: "int32" });
  });
});

describe("rope inverse", () => {
  it("rotates by −θ (whole and partial rotary dims, strided x), and undoes rope", async () => {
    for (const [shape, rotaryDim, positionOffset] of [
      [[2, 3, 5, 8], null, 0],
      [[1, 2, 4, 7], 6, 1000],
    ] as const) {
      const x = randomTensor([...shape], 90);
      const r = rotaryDim ?? shape[3];
      const a = { base: 10000, rotaryDim, positionOffset };
      for (const [layout, xi] of await layouts(ops, x, [3, 0, 2, 1])) {
        for (const inverse of [false, true]) {
          expectClose(
            await ops.run("rope", { ...a, inverse }, [xi], [...shape]),
            rope64(values(x), shape, 10000, r, positionOffset, inverse),
            `${layout} inverse ${inverse}`,
          );
        }
      }
      const there = await ops.dispatch("rope", { ...a, inverse: false }, [x], [...shape]);
      expectClose(await ops.run("rope", { ...a, inverse: true }, [there], [...shape]), values(x), "round trip");
      webgpu.release(there);
    }
    await expect(
      ops.error(
        "rope",
        { base: 10000, rotaryDim: null, positionOffset: 0, inverse: 1 },
        [randomTensor([1, 1, 2, 4], 1)],
        [1, 1, 2, 4],
        "rope",
      ),
    ).resolves.toMatchObject({
      code: "attr",
      subject: "rope.inverse",
    });
  });
});
