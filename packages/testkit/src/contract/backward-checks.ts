// The backward ops against their float64 references (reference/backward64.ts, itself proven against finite differences
// of the forward references): sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, layer-norm-grad,
// layer-norm-weight-grad, gelu-grad, relu's gradient, embedding-grad, cross-entropy-grad, and rope's `inverse` (those of
// rows and elements in backward-row-checks.ts). Every op gets random
// data, host views and transposed values made on the executor (strided inputs), and its edge cases: fully masked
// softmax rows, −∞ in mask-grad, repeated and out-of-range ids, ignoreIndex and each reduction, leading and middle axes
// of sum-to, negative pad axes, inverse(rope(x)) = x, and reductions long enough to need careful accumulation.
// Nothing here asks `supports`: every executor is expected to have every kernel, and a missing one fails as
// "unsupported".
// Legend: B batch, H heads, L length, S keys, D head dim, E model dim, V vocabulary / classes.
import { expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { linearWeightGrad64, maskGrad64, pad64, softmaxGrad64, sumTo64 } from "../reference/backward64.js";
import { maskFull64 } from "../reference/block64.js";
import { softmax64 } from "../reference/ops64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, expectExact, OP_TOL, runValues } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { expectZeros, f64, f32, hostStrided, onExecutor, range } from "./values.js";
import { backwardRowChecks } from "./backward-row-checks.js";

export function backwardChecks(ctx: ContractContext): void {
  // ---------------------------------------------------------------------------------------------------- sum-to
  const sumToCases: [string, number[], number[]][] = [
    ["a bias gradient [2, 3, 4] → [4] (two leading axes)", [2, 3, 4], [4]],
    ["[2, 3, 4] → [3, 4] (one leading axis)", [2, 3, 4], [3, 4]],
    ["[2, 3, 4] → [1, 3, 4] (a leading axis of 1)", [2, 3, 4], [1, 3, 4]],
    ["[2, 3, 4] → [2, 1, 4] (a middle axis of 1)", [2, 3, 4], [2, 1, 4]],
    ["GQA head groups [2, 2, 3, 4, 5] → [2, 2, 1, 4, 5] (a middle axis of 1)", [2, 2, 3, 4, 5], [2, 2, 1, 4, 5]],
    ["[2, 3, 4] → [3, 1] (a leading axis and the last)", [2, 3, 4], [3, 1]],
    ["[2, 3, 4] → [1, 1, 1]", [2, 3, 4], [1, 1, 1]],
    ["[2, 3, 4] → [] (everything)", [2, 3, 4], []],
    ["[2, 3, 4] → [2, 3, 4] (a copy)", [2, 3, 4], [2, 3, 4]],
  ];
  sumToCases.forEach(([label, xs, os], n) => {
    it(`sum-to: ${label}; dense, a strided host view, a transposed value on the executor`, async () => {
      const x = randomTensor(createRng(900 + n), xs);
      const want = { shape: os, data: sumTo64(f64(x), xs, os) };
      expectClose(await ctx.h.run("sum-to", attrs.sumTo(os), [x], os), want, OP_TOL, `sum-to ${label}`);
      expectClose(
        await ctx.h.run("sum-to", attrs.sumTo(os), [hostStrided(x)], os),
        want,
        OP_TOL,
        `sum-to ${label} of a strided view`,
      );
      expectClose(
        await runValues(ctx.h, "sum-to", attrs.sumTo(os), [await onExecutor(ctx.h, x)], os),
        want,
        OP_TOL,
        `sum-to ${label} of a transposed value`,
      );
    });
  });

  it("sum-to: long reductions accumulate with care: [1024, 8] → [8] and [1, 8], [8, 1024] → [8, 1]", async () => {
    const rng = createRng(910);
    const rows = randomTensor(rng, [1024, 8]);
    for (const os of [[8], [1, 8]]) {
      expectClose(
        await ctx.h.run("sum-to", attrs.sumTo(os), [rows], os),
        { shape: os, data: sumTo64(f64(rows), [1024, 8], os) },
        OP_TOL,
        `sum-to [1024, 8] → [${os}]`,
      );
    }
    const cols = randomTensor(rng, [8, 1024]);
    expectClose(
      await ctx.h.run("sum-to", attrs.sumTo([8, 1]), [cols], [8, 1]),
      { shape: [8, 1], data: sumTo64(f64(cols), [8, 1024], [8, 1]) },
      OP_TOL,
      "sum-to [8, 1024] → [8, 1]",
    );
    expectClose(
      await runValues(ctx.h, "sum-to", attrs.sumTo([8]), [await onExecutor(ctx.h, rows)], [8]),
      { shape: [8], data: sumTo64(f64(rows), [1024, 8], [8]) },
      OP_TOL,
      "sum-to of a transposed [1024, 8]",
    );
  });

  // ---------------------------------------------------------------------------------------------------- pad
  const padCases: [string, number[], number, number, number][] = [
    ["the key third of a fused QKV gradient: axis -1, 4 before and 4 after", [2, 3, 4], -1, 4, 4],
    ["a middle axis, zeros after only", [2, 3, 4], 1, 0, 2],
    ["axis -2, zeros on both sides", [2, 3, 4], -2, 2, 1],
    ["axis -3 (the first), zeros before only", [2, 3, 4], -3, 1, 0],
    ["nothing added (a copy)", [3, 4], 0, 0, 0],
  ];
  padCases.forEach(([label, shape, axis, before, after], n) => {
    it(`pad: ${label}; values copied exactly (NaN and ±∞ included), dense and strided`, async () => {
      const special = [NaN, Infinity, -Infinity, -0];
      const x = randomTensor(createRng(920 + n), shape, (r, i) =>
        i % 7 === 3 ? special[((i / 7) % 4) | 0]! : r.normal(),
      );
      const want = pad64(f64(x), shape, axis, before, after);
      const a = attrs.pad(axis, before, after);
      expectExact(await ctx.h.run("pad", a, [x], want.shape), want, `pad ${label}`);
      expectExact(await ctx.h.run("pad", a, [hostStrided(x)], want.shape), want, `pad ${label} of a strided view`);
      expectExact(
        await runValues(ctx.h, "pad", a, [await onExecutor(ctx.h, x)], want.shape),
        want,
        `pad ${label} of a transposed value`,
      );
    });
  });

  // ---------------------------------------------------------------------------------------------------- linear-weight-grad
  const lwgCases: [string, number[], number, number][] = [
    ["grad [2, 3, 4], x [2, 3, 5]", [2, 3], 4, 5],
    ["rank 2: grad [6, 4], x [6, 5]", [6], 4, 5],
    ["odd sizes past any tile: grad [2, 37, 13], x [2, 37, 19]", [2, 37], 13, 19],
  ];
  lwgCases.forEach(([label, lead, outF, inF], n) => {
    it(`linear-weight-grad: ${label} → [${outF}, ${inF}]; dense and strided host views`, async () => {
      const rng = createRng(930 + n);
      const g = randomTensor(rng, [...lead, outF]);
      const x = randomTensor(rng, [...lead, inF]);
      const want = { shape: [outF, inF], data: linearWeightGrad64(f64(g), outF, f64(x), inF) };
      expectClose(
        await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [g, x], [outF, inF]),
        want,
        OP_TOL,
        `linear-weight-grad ${label}`,
      );
      expectClose(
        await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [hostStrided(g), hostStrided(x)], [outF, inF]),
        want,
        OP_TOL,
        `linear-weight-grad ${label}, strided views`,
      );
      expectClose(
        await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [g, hostStrided(x)], [outF, inF]),
        want,
        OP_TOL,
        `linear-weight-grad ${label}, strided x only`,
      );
    });
  });

  it("linear-weight-grad: transposed values made on the executor, leading axes swapped too", async () => {
    const rng = createRng(935);
    const h = ctx.h;
    const g2 = randomTensor(rng, [6, 4]);
    const x2 = randomTensor(rng, [6, 5]);
    const want2 = { shape: [4, 5], data: linearWeightGrad64(f64(g2), 4, f64(x2), 5) };
    expectClose(
      await runValues(
        h,
        "linear-weight-grad",
        attrs.linearWeightGrad(),
        [await onExecutor(h, g2), await onExecutor(h, x2)],
        [4, 5],
      ),
      want2,
      OP_TOL,
      "linear-weight-grad of transposed grad and x",
    );
    expectClose(
      await runValues(
        h,
        "linear-weight-grad",
        attrs.linearWeightGrad(),
        [await onExecutor(h, g2), await h.upload(x2)],
        [4, 5],
      ),
      want2,
      OP_TOL,
      "linear-weight-grad of a transposed grad",
    );
    const g3 = randomTensor(rng, [2, 3, 4]);
    const x3 = randomTensor(rng, [2, 3, 5]);
    const want3 = { shape: [4, 5], data: linearWeightGrad64(f64(g3), 4, f64(x3), 5) };
    // [2, 3, ·] viewed from [3, 2, ·]: the leading axes cannot be flattened into one stride.
    expectClose(
      await runValues(
        h,
        "linear-weight-grad",
        attrs.linearWeightGrad(),
        [await onExecutor(h, g3, [1, 0, 2]), await onExecutor(h, x3, [1, 0, 2])],
        [4, 5],
      ),
      want3,
      OP_TOL,
      "linear-weight-grad with leading axes swapped",
    );
    expectClose(
      await runValues(
        h,
        "linear-weight-grad",
        attrs.linearWeightGrad(),
        [await onExecutor(h, g3), await onExecutor(h, x3, [1, 0, 2])],
        [4, 5],
      ),
      want3,
      OP_TOL,
      "linear-weight-grad of a fully transposed grad",
    );
  });

  it("linear-weight-grad: a long reduction over 512 rows (grad [512, 7], x [512, 9])", async () => {
    const rng = createRng(936);
    const g = randomTensor(rng, [4, 128, 7]);
    const x = randomTensor(rng, [4, 128, 9]);
    const want = { shape: [7, 9], data: linearWeightGrad64(f64(g), 7, f64(x), 9) };
    expectClose(
      await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [g, x], [7, 9]),
      want,
      OP_TOL,
      "linear-weight-grad over 512 rows",
    );
  });

  // ---------------------------------------------------------------------------------------------------- softmax-grad
  for (const scale of [1, 0.35]) {
    it(`softmax-grad (scale ${scale}): scale · y ⊙ (grad − Σ grad ⊙ y) per row; dense, strided host views, transposed values`, async () => {
      const rng = createRng(940 + (scale === 1 ? 0 : 1));
      const shape = [2, 2, 3, 5];
      const y = f32(softmax64(f64(randomTensor(rng, shape, (r) => 2 * r.normal())), 5, scale), shape);
      const g = randomTensor(rng, shape);
      const want = { shape, data: softmaxGrad64(f64(y), f64(g), 5, scale) };
      const a = attrs.softmaxGrad(scale);
      expectClose(await ctx.h.run("softmax-grad", a, [y, g], shape), want, OP_TOL, `softmax-grad scale ${scale}`);
      expectClose(
        await ctx.h.run("softmax-grad", a, [hostStrided(y), hostStrided(g)], shape),
        want,
        OP_TOL,
        `softmax-grad scale ${scale}, strided views`,
      );
      expectClose(
        await runValues(ctx.h, "softmax-grad", a, [await onExecutor(ctx.h, y), await onExecutor(ctx.h, g)], shape),
        want,
        OP_TOL,
        `softmax-grad scale ${scale}, transposed values`,
      );
      expectClose(
        await runValues(
          ctx.h,
          "softmax-grad",
          a,
          [await ctx.h.upload(y), await onExecutor(ctx.h, g, [0, 1, 3, 2])],
          shape,
        ),
        want,
        OP_TOL,
        `softmax-grad scale ${scale}, a transposed grad`,
      );
    });
  }

  it("softmax-grad: a fully masked row (y all 0) gives exactly 0, never NaN; masked entries of other rows are exactly 0", async () => {
    const m = -Infinity;
    const S = 5;
    const x = Float64Array.of(m, m, m, m, m, 0.5, m, 2, -1, m, 3, 1, 4, 1, 5);
    const y = f32(softmax64(x, S, 0.7), [3, S]);
    const g = Tensor.from([1e3, -2e3, 0.5, 3e4, -1, 0.3, -0.7, 1.1, 2.2, -3.3, 0.1, 0.2, 0.3, 0.4, 0.5], [3, S]);
    const out = await ctx.h.run("softmax-grad", attrs.softmaxGrad(0.7), [y, g], [3, S]);
    expectClose(
      out,
      { shape: [3, S], data: softmaxGrad64(f64(y), f64(g), S, 0.7) },
      OP_TOL,
      "softmax-grad with masked entries",
    );
    expectZeros(out, range(0, S), "the fully masked row");
    expectZeros(out, [6, 9], "masked entries of a partly masked row");
  });

  it("softmax-grad: a NaN in grad or y makes its row NaN and leaves the other rows alone", async () => {
    const S = 4;
    const y = f32(softmax64(f64(randomTensor(createRng(942), [3, S])), S, 1), [3, S]);
    const yd = y.toFloat32Array().slice();
    yd.fill(NaN, 2 * S, 3 * S); // a row the forward softmax made NaN
    const yNaN = Tensor.from(yd, [3, S]);
    const g = Tensor.from([0.1, NaN, 0.3, 0.4, 1, 2, 3, 4, 0.5, 0.6, 0.7, 0.8], [3, S]);
    const got = (await ctx.h.run("softmax-grad", attrs.softmaxGrad(1), [yNaN, g], [3, S])).toFloat32Array();
    expect(
      Array.from(got.subarray(0, S)).every(Number.isNaN),
      `row with a NaN grad: got ${Array.from(got.subarray(0, S))}`,
    ).toBe(true);
    expect(
      Array.from(got.subarray(2 * S)).every(Number.isNaN),
      `row with a NaN y: got ${Array.from(got.subarray(2 * S))}`,
    ).toBe(true);
    const second = softmaxGrad64(f64(yNaN).subarray(S, 2 * S), f64(g).subarray(S, 2 * S), S, 1);
    expectClose(
      Tensor.from(got.subarray(S, 2 * S), [S]),
      { shape: [S], data: second },
      OP_TOL,
      "softmax-grad of the row without a NaN",
    );
  });

  // ---------------------------------------------------------------------------------------------------- mask-grad
  it("mask-grad: scale · grad where the forward output is finite, exactly 0 where it is −∞ (causal and a −∞ bias); strided", async () => {
    const rng = createRng(950);
    const [B, H, L, S] = [2, 2, 4, 4];
    const scores = randomTensor(rng, [B, H, L, S]);
    const bias = randomTensor(rng, [L, S], (r) => (r.uniform() < 0.2 ? -Infinity : r.normal()));
    const masked = f32(
      maskFull64(
        f64(scores),
        B,
        H,
        L,
        S,
        { causal: true, window: null, alignment: "top-left", scale: 0.5 },
        undefined,
        undefined,
        { shape: [L, S], data: f64(bias) },
      ),
      [B, H, L, S],
    );
    const g = randomTensor(rng, [B, H, L, S]);
    const shape = [B, H, L, S];
    const want = { shape, data: maskGrad64(f64(g), f64(masked), 0.5) };
    const hidden = range(0, masked.size).filter((k) => masked.toFloat32Array()[k] === -Infinity);
    expect(hidden.length, "the test data hides some entries").toBeGreaterThan(0);
    const a = attrs.maskGrad(0.5);
    for (const [label, out] of [
      ["dense", await ctx.h.run("mask-grad", a, [g, masked], shape)],
      ["strided views", await ctx.h.run("mask-grad", a, [hostStrided(g), hostStrided(masked)], shape)],
      [
        "transposed values",
        await runValues(ctx.h, "mask-grad", a, [await onExecutor(ctx.h, g), await onExecutor(ctx.h, masked)], shape),
      ],
    ] as const) {
      expectClose(out, want, OP_TOL, `mask-grad ${label}`);
      expectZeros(out, hidden, `mask-grad ${label}: hidden entries`);
    }
  });

  it("mask-grad: only −∞ hides; +∞, NaN, −3e38 and 0 in the forward output pass scale · grad", async () => {
    const masked = Tensor.from([-Infinity, Infinity, NaN, 0, -3e38, 1e30, -Infinity, 2], [2, 4]);
    const g = randomTensor(createRng(951), [2, 4]);
    const scale = 1 / Math.sqrt(8);
    const out = await ctx.h.run("mask-grad", attrs.maskGrad(scale), [g, masked], [2, 4]);
    expectClose(
      out,
      { shape: [2, 4], data: maskGrad64(f64(g), f64(masked), scale) },
      OP_TOL,
      "mask-grad with ±∞ and NaN",
    );
    expectZeros(out, [0, 6], "mask-grad at −∞");
  });

  backwardRowChecks(ctx);
}
