// The backward ops against their float64 references (reference/backward64.ts, itself proven against finite differences
// of the forward references): sum-to, pad, linear-weight-grad, softmax-grad, mask-grad, layer-norm-grad,
// layer-norm-weight-grad, gelu-grad, relu-grad, embedding-grad, cross-entropy-grad, and rope's `inverse`. Every op gets random
// data, host views and transposed values made on the executor (strided inputs), and its edge cases: fully masked
// softmax rows, −∞ in mask-grad, repeated and out-of-range ids, ignoreIndex and each reduction, leading and middle axes
// of sum-to, negative pad axes, inverse(rope(x)) = x, and reductions long enough to need careful accumulation.
// Nothing here asks `supports`: every executor is expected to have every kernel, and a missing one fails as
// "unsupported".
// Legend: B batch, H heads, L length, S keys, D head dim, E model dim, V vocabulary / classes.
import { expect, it } from "vitest";
import { pointwiseGrad, reluOp, type Expr } from "@attngraph/graph";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import {
  crossEntropyGrad64,
  embeddingGrad64,
  geluGrad64,
  layerNormGrad64,
  layerNormWeightGrad64,
  linearWeightGrad64,
  maskGrad64,
  pad64,
  reluGrad64,
  softmaxGrad64,
  sumTo64,
} from "../reference/backward64.js";
import { maskFull64, relu64 } from "../reference/block64.js";
import { softmax64 } from "../reference/ops64.js";
import { rope64 } from "../reference/rope64.js";
import { attrs, type BoundRopeAttrs } from "./attrs.js";
import { expectTypedError } from "./block-checks.js";
import type { ContractContext } from "./context.js";
import { expectClose, expectExact, OP_TOL, runValues, stridedOn, thrown, type Harness } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";

/** relu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, relu's input in x1). */
const RELU_GRAD = { expr: (pointwiseGrad(reluOp.pointwise!({}), 0) as { expr: Expr }).expr };

const f64 = (t: Tensor): Float64Array => Float64Array.from(t.toFloat32Array());
const f32 = (data: ArrayLike<number>, shape: readonly number[]): Tensor => Tensor.from(Float32Array.from(data), shape);
const reversed = (rank: number): number[] => Array.from({ length: rank }, (_, i) => rank - 1 - i);

/** The values of `t` as a host view that is not contiguous: stored with its axes reversed, viewed back (rank >= 2). */
function hostStrided(t: Tensor): Tensor {
  const rev = reversed(t.rank);
  return t.permute(rev).contiguous().permute(rev);
}

/** The values of `t` as a value made on the executor by a transpose: every axis strided, the last one included. */
function onExecutor(h: Harness, t: Tensor, perm: readonly number[] = reversed(t.rank)): Promise<unknown> {
  return stridedOn(h, t, perm);
}

/** Asserts every element at `indices` is exactly 0 (either sign): what masking or ignoring promises, not "about 0". */
function expectZeros(got: Tensor, indices: Iterable<number>, label: string): void {
  const a = got.toFloat32Array();
  for (const i of indices) expect(a[i] === 0, `${label}: element ${i} is ${a[i]}, not 0`).toBe(true);
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

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
      expectClose(await ctx.h.run("sum-to", attrs.sumTo(os), [hostStrided(x)], os), want, OP_TOL, `sum-to ${label} of a strided view`);
      expectClose(await runValues(ctx.h, "sum-to", attrs.sumTo(os), [await onExecutor(ctx.h, x)], os), want, OP_TOL, `sum-to ${label} of a transposed value`);
    });
  });

  it("sum-to: long reductions accumulate with care: [1024, 8] → [8] and [1, 8], [8, 1024] → [8, 1]", async () => {
    const rng = createRng(910);
    const rows = randomTensor(rng, [1024, 8]);
    for (const os of [[8], [1, 8]]) {
      expectClose(await ctx.h.run("sum-to", attrs.sumTo(os), [rows], os), { shape: os, data: sumTo64(f64(rows), [1024, 8], os) }, OP_TOL, `sum-to [1024, 8] → [${os}]`);
    }
    const cols = randomTensor(rng, [8, 1024]);
    expectClose(await ctx.h.run("sum-to", attrs.sumTo([8, 1]), [cols], [8, 1]), { shape: [8, 1], data: sumTo64(f64(cols), [8, 1024], [8, 1]) }, OP_TOL, "sum-to [8, 1024] → [8, 1]");
    expectClose(await runValues(ctx.h, "sum-to", attrs.sumTo([8]), [await onExecutor(ctx.h, rows)], [8]), { shape: [8], data: sumTo64(f64(rows), [1024, 8], [8]) }, OP_TOL, "sum-to of a transposed [1024, 8]");
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
      const x = randomTensor(createRng(920 + n), shape, (r, i) => (i % 7 === 3 ? special[(i / 7) % 4 | 0]! : r.normal()));
      const want = pad64(f64(x), shape, axis, before, after);
      const a = attrs.pad(axis, before, after);
      expectExact(await ctx.h.run("pad", a, [x], want.shape), want, `pad ${label}`);
      expectExact(await ctx.h.run("pad", a, [hostStrided(x)], want.shape), want, `pad ${label} of a strided view`);
      expectExact(await runValues(ctx.h, "pad", a, [await onExecutor(ctx.h, x)], want.shape), want, `pad ${label} of a transposed value`);
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
      expectClose(await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [g, x], [outF, inF]), want, OP_TOL, `linear-weight-grad ${label}`);
      expectClose(await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [hostStrided(g), hostStrided(x)], [outF, inF]), want, OP_TOL, `linear-weight-grad ${label}, strided views`);
      expectClose(await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [g, hostStrided(x)], [outF, inF]), want, OP_TOL, `linear-weight-grad ${label}, strided x only`);
    });
  });

  it("linear-weight-grad: transposed values made on the executor, leading axes swapped too", async () => {
    const rng = createRng(935);
    const h = ctx.h;
    const g2 = randomTensor(rng, [6, 4]);
    const x2 = randomTensor(rng, [6, 5]);
    const want2 = { shape: [4, 5], data: linearWeightGrad64(f64(g2), 4, f64(x2), 5) };
    expectClose(await runValues(h, "linear-weight-grad", attrs.linearWeightGrad(), [await onExecutor(h, g2), await onExecutor(h, x2)], [4, 5]), want2, OP_TOL, "linear-weight-grad of transposed grad and x");
    expectClose(await runValues(h, "linear-weight-grad", attrs.linearWeightGrad(), [await onExecutor(h, g2), await h.upload(x2)], [4, 5]), want2, OP_TOL, "linear-weight-grad of a transposed grad");
    const g3 = randomTensor(rng, [2, 3, 4]);
    const x3 = randomTensor(rng, [2, 3, 5]);
    const want3 = { shape: [4, 5], data: linearWeightGrad64(f64(g3), 4, f64(x3), 5) };
    // [2, 3, ·] viewed from [3, 2, ·]: the leading axes cannot be flattened into one stride.
    expectClose(await runValues(h, "linear-weight-grad", attrs.linearWeightGrad(), [await onExecutor(h, g3, [1, 0, 2]), await onExecutor(h, x3, [1, 0, 2])], [4, 5]), want3, OP_TOL, "linear-weight-grad with leading axes swapped");
    expectClose(await runValues(h, "linear-weight-grad", attrs.linearWeightGrad(), [await onExecutor(h, g3), await onExecutor(h, x3, [1, 0, 2])], [4, 5]), want3, OP_TOL, "linear-weight-grad of a fully transposed grad");
  });

  it("linear-weight-grad: a long reduction over 512 rows (grad [512, 7], x [512, 9])", async () => {
    const rng = createRng(936);
    const g = randomTensor(rng, [4, 128, 7]);
    const x = randomTensor(rng, [4, 128, 9]);
    const want = { shape: [7, 9], data: linearWeightGrad64(f64(g), 7, f64(x), 9) };
    expectClose(await ctx.h.run("linear-weight-grad", attrs.linearWeightGrad(), [g, x], [7, 9]), want, OP_TOL, "linear-weight-grad over 512 rows");
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
      expectClose(await ctx.h.run("softmax-grad", a, [hostStrided(y), hostStrided(g)], shape), want, OP_TOL, `softmax-grad scale ${scale}, strided views`);
      expectClose(await runValues(ctx.h, "softmax-grad", a, [await onExecutor(ctx.h, y), await onExecutor(ctx.h, g)], shape), want, OP_TOL, `softmax-grad scale ${scale}, transposed values`);
      expectClose(await runValues(ctx.h, "softmax-grad", a, [await ctx.h.upload(y), await onExecutor(ctx.h, g, [0, 1, 3, 2])], shape), want, OP_TOL, `softmax-grad scale ${scale}, a transposed grad`);
    });
  }

  it("softmax-grad: a fully masked row (y all 0) gives exactly 0, never NaN; masked entries of other rows are exactly 0", async () => {
    const m = -Infinity;
    const S = 5;
    const x = Float64Array.of(m, m, m, m, m, 0.5, m, 2, -1, m, 3, 1, 4, 1, 5);
    const y = f32(softmax64(x, S, 0.7), [3, S]);
    const g = Tensor.from([1e3, -2e3, 0.5, 3e4, -1, 0.3, -0.7, 1.1, 2.2, -3.3, 0.1, 0.2, 0.3, 0.4, 0.5], [3, S]);
    const out = await ctx.h.run("softmax-grad", attrs.softmaxGrad(0.7), [y, g], [3, S]);
    expectClose(out, { shape: [3, S], data: softmaxGrad64(f64(y), f64(g), S, 0.7) }, OP_TOL, "softmax-grad with masked entries");
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
    expect(Array.from(got.subarray(0, S)).every(Number.isNaN), `row with a NaN grad: got ${Array.from(got.subarray(0, S))}`).toBe(true);
    expect(Array.from(got.subarray(2 * S)).every(Number.isNaN), `row with a NaN y: got ${Array.from(got.subarray(2 * S))}`).toBe(true);
    const second = softmaxGrad64(f64(yNaN).subarray(S, 2 * S), f64(g).subarray(S, 2 * S), S, 1);
    expectClose(Tensor.from(got.subarray(S, 2 * S), [S]), { shape: [S], data: second }, OP_TOL, "softmax-grad of the row without a NaN");
  });

  // ---------------------------------------------------------------------------------------------------- mask-grad
  it("mask-grad: scale · grad where the forward output is finite, exactly 0 where it is −∞ (causal and a −∞ bias); strided", async () => {
    const rng = createRng(950);
    const [B, H, L, S] = [2, 2, 4, 4];
    const scores = randomTensor(rng, [B, H, L, S]);
    const bias = randomTensor(rng, [L, S], (r) => (r.uniform() < 0.2 ? -Infinity : r.normal()));
    const masked = f32(maskFull64(f64(scores), B, H, L, S, { causal: true, window: null, alignment: "top-left", scale: 0.5 }, undefined, undefined, { shape: [L, S], data: f64(bias) }), [B, H, L, S]);
    const g = randomTensor(rng, [B, H, L, S]);
    const shape = [B, H, L, S];
    const want = { shape, data: maskGrad64(f64(g), f64(masked), 0.5) };
    const hidden = range(0, masked.size).filter((k) => masked.toFloat32Array()[k] === -Infinity);
    expect(hidden.length, "the test data hides some entries").toBeGreaterThan(0);
    const a = attrs.maskGrad(0.5);
    for (const [label, out] of [
      ["dense", await ctx.h.run("mask-grad", a, [g, masked], shape)],
      ["strided views", await ctx.h.run("mask-grad", a, [hostStrided(g), hostStrided(masked)], shape)],
      ["transposed values", await runValues(ctx.h, "mask-grad", a, [await onExecutor(ctx.h, g), await onExecutor(ctx.h, masked)], shape)],
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
    expectClose(out, { shape: [2, 4], data: maskGrad64(f64(g), f64(masked), scale) }, OP_TOL, "mask-grad with ±∞ and NaN");
    expectZeros(out, [0, 6], "mask-grad at −∞");
  });

  // ---------------------------------------------------------------------------------------------------- layer-norm-grad
  it("layer-norm-grad: with and without weight, eps 1e-5 and 1e-3; dense, strided host views, transposed values", async () => {
    const rng = createRng(960);
    const E = 8;
    const shape = [2, 3, E];
    const x = randomTensor(rng, shape, (r) => 0.5 + 2 * r.normal());
    const g = randomTensor(rng, shape);
    const w = randomTensor(rng, [E]);
    for (const eps of [1e-5, 1e-3]) {
      for (const weight of [w, undefined]) {
        const label = `layer-norm-grad eps ${eps}${weight ? " with weight" : ""}`;
        const want = { shape, data: layerNormGrad64(f64(g), f64(x), E, eps, weight && f64(weight)) };
        const a = attrs.layerNormGrad(eps);
        expectClose(await ctx.h.run("layer-norm-grad", a, [g, x, weight], shape), want, OP_TOL, label);
        expectClose(await ctx.h.run("layer-norm-grad", a, [hostStrided(g), hostStrided(x), weight], shape), want, OP_TOL, `${label}, strided views`);
        const wv = weight && (await ctx.h.upload(weight));
        expectClose(await runValues(ctx.h, "layer-norm-grad", a, [await onExecutor(ctx.h, g), await onExecutor(ctx.h, x, [1, 2, 0]), wv], shape), want, OP_TOL, `${label}, transposed values`);
      }
    }
  });

  it("layer-norm-grad and layer-norm-weight-grad: a constant row (x̂ = 0) and a row offset by 1e4 (statistics two-pass)", async () => {
    const E = 8;
    const x = Tensor.from([...new Array<number>(E).fill(3.25), ...Array.from({ length: E }, (_, i) => 1e4 + (i % 3) * 0.5)], [2, E]);
    const g = randomTensor(createRng(961), [2, E]);
    const w = randomTensor(createRng(962), [E]);
    const tol = { abs: 1e-4, rel: 1e-4 };
    expectClose(await ctx.h.run("layer-norm-grad", attrs.layerNormGrad(), [g, x, w], [2, E]), { shape: [2, E], data: layerNormGrad64(f64(g), f64(x), E, 1e-5, f64(w)) }, tol, "layer-norm-grad of a constant row and a row offset by 1e4");
    expectClose(await ctx.h.run("layer-norm-weight-grad", attrs.layerNormGrad(), [g, x], [E]), { shape: [E], data: layerNormWeightGrad64(f64(g), f64(x), E, 1e-5) }, tol, "layer-norm-weight-grad of a constant row and a row offset by 1e4");
  });

  it("layer-norm-weight-grad: Σ over rows of grad ⊙ x̂, eps 1e-5 and 1e-3; dense, strided host views, transposed values", async () => {
    const rng = createRng(963);
    const E = 8;
    const shape = [2, 3, E];
    const x = randomTensor(rng, shape, (r) => -0.5 + 2 * r.normal());
    const g = randomTensor(rng, shape);
    for (const eps of [1e-5, 1e-3]) {
      const want = { shape: [E], data: layerNormWeightGrad64(f64(g), f64(x), E, eps) };
      const a = attrs.layerNormGrad(eps);
      expectClose(await ctx.h.run("layer-norm-weight-grad", a, [g, x], [E]), want, OP_TOL, `layer-norm-weight-grad eps ${eps}`);
      expectClose(await ctx.h.run("layer-norm-weight-grad", a, [hostStrided(g), hostStrided(x)], [E]), want, OP_TOL, `layer-norm-weight-grad eps ${eps}, strided views`);
      expectClose(await runValues(ctx.h, "layer-norm-weight-grad", a, [await onExecutor(ctx.h, g, [1, 2, 0]), await onExecutor(ctx.h, x)], [E]), want, OP_TOL, `layer-norm-weight-grad eps ${eps}, transposed values`);
    }
  });

  it("layer-norm-weight-grad: a long reduction over 512 rows", async () => {
    const rng = createRng(964);
    const g = randomTensor(rng, [512, 8]);
    const x = randomTensor(rng, [512, 8], (r) => 1 + r.normal());
    expectClose(await ctx.h.run("layer-norm-weight-grad", attrs.layerNormGrad(), [g, x], [8]), { shape: [8], data: layerNormWeightGrad64(f64(g), f64(x), 8, 1e-5) }, OP_TOL, "layer-norm-weight-grad over 512 rows");
  });

  // ---------------------------------------------------------------------------------------------------- gelu-grad
  for (const approximate of ["none", "tanh"] as const) {
    it(`gelu-grad (${approximate}): grad · gelu'(x) over -10..10 and extremes; strided host views and transposed values`, async () => {
      const values = [...Array.from({ length: 81 }, (_, i) => -10 + i * 0.25), -30, 30, -1e-3, 1e-3, 0, -0];
      const x = Tensor.from(values, [values.length]);
      const g = randomTensor(createRng(970), [values.length]);
      const a = attrs.geluGrad(approximate);
      expectClose(await ctx.h.run("gelu-grad", a, [g, x], x.shape), { shape: x.shape, data: geluGrad64(f64(g), f64(x), approximate) }, OP_TOL, `gelu-grad ${approximate}`);
      const rng = createRng(971);
      const x2 = randomTensor(rng, [4, 6], (r) => 3 * r.normal());
      const g2 = randomTensor(rng, [4, 6]);
      const want = { shape: [4, 6], data: geluGrad64(f64(g2), f64(x2), approximate) };
      expectClose(await ctx.h.run("gelu-grad", a, [hostStrided(g2), hostStrided(x2)], [4, 6]), want, OP_TOL, `gelu-grad ${approximate}, strided views`);
      expectClose(await runValues(ctx.h, "gelu-grad", a, [await ctx.h.upload(g2), await onExecutor(ctx.h, x2)], [4, 6]), want, OP_TOL, `gelu-grad ${approximate}, a transposed x`);
    });
  }

  // ---------------------------------------------------------------------------------------------------- relu's gradient
  // The pointwise kernel with relu's derived gradient (grad in x0, relu's input in x1; fed relu outputs here, which
  // relu leaves as they are): a select, as PyTorch's threshold_backward.
  it("relu's gradient: grad where x > 0 or NaN, exactly 0 where x <= 0 (a NaN grad included); strided host views and transposed values", async () => {
    const y = Tensor.from([0, -0, NaN, Infinity, 1e-30, 2.5, 0, 3, 0, 7], [10]);
    const g = Tensor.from([1.5, -2, 3, -4, 5, -6, NaN, NaN, Infinity, 8], [10]);
    expectExact(await ctx.h.run("pointwise", RELU_GRAD, [g, y], y.shape), { shape: y.shape, data: reluGrad64(f64(g), f64(y)) }, "relu-grad edge cases");
    const rng = createRng(972);
    const y2 = Tensor.from(relu64(f64(randomTensor(rng, [4, 6], (r) => 3 * r.normal()))), [4, 6]);
    const g2 = randomTensor(rng, [4, 6]);
    const want = { shape: [4, 6], data: reluGrad64(f64(g2), f64(y2)) };
    expectExact(await ctx.h.run("pointwise", RELU_GRAD, [hostStrided(g2), hostStrided(y2)], [4, 6]), want, "relu-grad, strided views");
    expectExact(await runValues(ctx.h, "pointwise", RELU_GRAD, [await ctx.h.upload(g2), await onExecutor(ctx.h, y2)], [4, 6]), want, "relu-grad, a transposed y");
  });

  // ---------------------------------------------------------------------------------------------------- embedding-grad
  const embeddingIds = Tensor.int32([4, 0, 2, 2, 1, 4], [2, 3]);

  it("embedding-grad: a scatter-add by int32 id into [V, E]; repeated ids accumulate, unnamed rows are exactly 0; strided grad", async () => {
    const [V, E] = [6, 4];
    const g = randomTensor(createRng(980), [2, 3, E]);
    const want = { shape: [V, E], data: embeddingGrad64(embeddingIds.toInt32Array(), f64(g), V, E) };
    const a = attrs.embeddingGrad(V);
    for (const [label, out] of [
      ["dense", await ctx.h.run("embedding-grad", a, [embeddingIds, g], [V, E])],
      ["a strided grad", await ctx.h.run("embedding-grad", a, [embeddingIds, hostStrided(g)], [V, E])],
      ["a transposed grad", await runValues(ctx.h, "embedding-grad", a, [await ctx.h.upload(embeddingIds), await onExecutor(ctx.h, g)], [V, E])],
    ] as const) {
      expectClose(out, want, OP_TOL, `embedding-grad ${label}`);
      expectZeros(out, [...range(3 * E, 4 * E), ...range(5 * E, 6 * E)], `embedding-grad ${label}: rows 3 and 5, which no id names`);
    }
  });

  it("embedding-grad: 512 positions into 3 rows (heavy repeats accumulate with care)", async () => {
    const rng = createRng(981);
    const ids = Tensor.int32(Array.from({ length: 512 }, () => Math.floor(rng.uniform() * 3)), [4, 128]);
    const g = randomTensor(rng, [4, 128, 8]);
    const out = await ctx.h.run("embedding-grad", attrs.embeddingGrad(4), [ids, g], [4, 8]);
    expectClose(out, { shape: [4, 8], data: embeddingGrad64(ids.toInt32Array(), f64(g), 4, 8) }, OP_TOL, "embedding-grad of 512 positions");
    expectZeros(out, range(24, 32), "embedding-grad: row 3, which no id names");
  });

  it("embedding-grad: an id outside [0, V) is the forward embedding's kind of typed error, naming the node, position and id; the executor still works after it", async () => {
    const [V, E] = [6, 4];
    const g = randomTensor(createRng(982), [2, 3, E]);
    const gv = await ctx.h.upload(g);
    const table = await ctx.h.upload(randomTensor(createRng(983), [V, E]));
    for (const bad of [V, -1]) {
      const badIds = await ctx.h.upload(Tensor.int32([0, 1, 2, bad, 0, 0], [2, 3]));
      const e = await thrown(async () => ctx.h.dispatch("embedding-grad", attrs.embeddingGrad(V), [badIds, gv], [V, E]));
      expectTypedError(e, `embedding-grad id ${bad}`, new RegExp(`${bad} at \\[1, 0\\]`), /contract\.embedding-grad/);
      const forward = await thrown(async () => ctx.h.dispatch("embedding", attrs.none(), [badIds, table], [2, 3, E]));
      expect((e as AttnGraphError).code, `embedding-grad id ${bad}: the forward's error code`).toBe((forward as AttnGraphError | undefined)?.code);
    }
    const out = await runValues(ctx.h, "embedding-grad", attrs.embeddingGrad(V), [await ctx.h.upload(embeddingIds), gv], [V, E]);
    expectClose(out, { shape: [V, E], data: embeddingGrad64(embeddingIds.toInt32Array(), f64(g), V, E) }, OP_TOL, "embedding-grad after an error");
  });

  it("embedding-grad and cross-entropy-grad: float32 ids or targets are typed errors naming int32", async () => {
    const floatIds = await ctx.h.upload(Tensor.from([0, 1], [2]));
    const g = await ctx.h.upload(randomTensor(createRng(984), [2, 4]));
    expectTypedError(await thrown(async () => ctx.h.dispatch("embedding-grad", attrs.embeddingGrad(3), [floatIds, g], [3, 4])), "float32 ids", /int32/);
    expectTypedError(await thrown(async () => ctx.h.dispatch("cross-entropy-grad", attrs.crossEntropyGrad(), [g, floatIds, undefined], [2, 4])), "float32 targets", /int32/);
  });

  // ---------------------------------------------------------------------------------------------------- cross-entropy-grad
  const V = 5;
  const targets = Tensor.int32([0, 4, 2, 1, 3, 3], [2, 3]);
  const ignoring = Tensor.int32([0, -100, 2, -100, 3, 3], [2, 3]);
  for (const reduction of ["mean", "sum", "none"] as const) {
    it(`cross-entropy-grad (${reduction}): (softmax − onehot) · grad, grad absent and present, ignoreIndex null and -100 (ignored rows exactly 0)`, async () => {
      const rng = createRng(990);
      const logits = randomTensor(rng, [2, 3, V], (r) => 2 * r.normal());
      const grad = reduction === "none" ? randomTensor(rng, [2, 3]) : Tensor.from([-1.7], []);
      for (const ignoreIndex of [null, -100]) {
        const t = ignoreIndex === null ? targets : ignoring;
        for (const g of [undefined, grad]) {
          const label = `cross-entropy-grad ${reduction}, ignoreIndex ${ignoreIndex}, grad ${g ? "given" : "absent"}`;
          const out = await ctx.h.run("cross-entropy-grad", attrs.crossEntropyGrad({ reduction, ignoreIndex }), [logits, t, g], [2, 3, V]);
          expectClose(out, { shape: [2, 3, V], data: crossEntropyGrad64(f64(logits), V, t.toInt32Array(), reduction, ignoreIndex, g && f64(g)) }, OP_TOL, label);
          if (ignoreIndex !== null) expectZeros(out, [...range(V, 2 * V), ...range(3 * V, 4 * V)], `${label}: ignored positions`);
        }
      }
    });
  }

  it("cross-entropy-grad: an all-ignored mean gives zeros; logits of ±1000 and 1e4 stay finite; strided logits", async () => {
    const rng = createRng(991);
    const logits = randomTensor(rng, [2, 3, V]);
    const none = Tensor.int32(new Array<number>(6).fill(-100), [2, 3]);
    const zero = await ctx.h.run("cross-entropy-grad", attrs.crossEntropyGrad({ ignoreIndex: -100 }), [logits, none, Tensor.from([1], [])], [2, 3, V]);
    expectZeros(zero, range(0, 6 * V), "a mean over no counted position");
    const huge = Tensor.from([1000, 0, -1000, 5, 1e4, 1e4 - 1], [2, 3]);
    const ht = Tensor.int32([0, 1], [2]);
    const out = await ctx.h.run("cross-entropy-grad", attrs.crossEntropyGrad({ reduction: "sum" }), [huge, ht, undefined], [2, 3]);
    expect(out.toFloat32Array().every(Number.isFinite), "large logits").toBe(true);
    expectClose(out, { shape: [2, 3], data: crossEntropyGrad64(f64(huge), 3, [0, 1], "sum") }, OP_TOL, "cross-entropy-grad of large logits");
    const t = targets.toInt32Array();
    const g = randomTensor(rng, [2, 3]);
    const want = { shape: [2, 3, V], data: crossEntropyGrad64(f64(logits), V, t, "none", null, f64(g)) };
    const a = attrs.crossEntropyGrad({ reduction: "none" });
    expectClose(await ctx.h.run("cross-entropy-grad", a, [hostStrided(logits), targets, hostStrided(g)], [2, 3, V]), want, OP_TOL, "cross-entropy-grad of strided logits and grad");
    expectClose(await runValues(ctx.h, "cross-entropy-grad", a, [await onExecutor(ctx.h, logits), await ctx.h.upload(targets), await onExecutor(ctx.h, g)], [2, 3, V]), want, OP_TOL, "cross-entropy-grad of transposed logits and grad");
  });

  it("cross-entropy-grad: a target outside [0, V) is the forward's kind of typed error, naming the node, position and target; the executor still works after it", async () => {
    const logits = randomTensor(createRng(992), [2, 3, V]);
    const lv = await ctx.h.upload(logits);
    for (const [bad, ignoreIndex] of [[V, null], [-1, -100]] as const) {
      const badTargets = await ctx.h.upload(Tensor.int32([0, 1, 2, 3, bad, 0], [2, 3]));
      const a = attrs.crossEntropyGrad({ ignoreIndex });
      const e = await thrown(async () => ctx.h.dispatch("cross-entropy-grad", a, [lv, badTargets, undefined], [2, 3, V]));
      expectTypedError(e, `cross-entropy-grad target ${bad}`, new RegExp(`${bad} at \\[1, 1\\]`), /contract\.cross-entropy-grad/);
      const forward = await thrown(async () => ctx.h.dispatch("cross-entropy", attrs.crossEntropy({ ignoreIndex }), [lv, badTargets], []));
      expect((e as AttnGraphError).code, `cross-entropy-grad target ${bad}: the forward's error code`).toBe((forward as AttnGraphError | undefined)?.code);
    }
    const out = await runValues(ctx.h, "cross-entropy-grad", attrs.crossEntropyGrad(), [lv, await ctx.h.upload(targets), undefined], [2, 3, V]);
    expectClose(out, { shape: [2, 3, V], data: crossEntropyGrad64(f64(logits), V, targets.toInt32Array(), "mean") }, OP_TOL, "cross-entropy-grad after an error");
  });

  // ---------------------------------------------------------------------------------------------------- rope inverse
  const ropeCases: { label: string; H: number; L: number; D: number; attrs: Partial<BoundRopeAttrs> }[] = [
    { label: "whole head dim, base 10000", H: 3, L: 5, D: 8, attrs: {} },
    { label: "rotaryDim 4 < D = 10, positionOffset 7", H: 2, L: 4, D: 10, attrs: { rotaryDim: 4, positionOffset: 7 } },
    { label: "odd D = 7 with rotaryDim 6, base 500, positionOffset 1000", H: 2, L: 3, D: 7, attrs: { rotaryDim: 6, base: 500, positionOffset: 1000 } },
  ];
  ropeCases.forEach((c, n) => {
    it(`rope with inverse: true (${c.label}): equals the reference on strided inputs; inverse(rope(x)) = x and rope(inverse(x)) = x on the executor`, async () => {
      const shape = [2, c.H, c.L, c.D];
      const x = randomTensor(createRng(1000 + n), shape);
      const inv = attrs.rope({ ...c.attrs, inverse: true });
      const fwd = attrs.rope(c.attrs);
      const want = { shape, data: rope64(f64(x), 2, c.H, c.L, c.D, inv) };
      expectClose(await ctx.h.run("rope", inv, [x], shape), want, OP_TOL, `rope inverse ${c.label}`);
      expectClose(await ctx.h.run("rope", inv, [hostStrided(x)], shape), want, OP_TOL, `rope inverse ${c.label}, a strided view`);
      expectClose(await runValues(ctx.h, "rope", inv, [await onExecutor(ctx.h, x)], shape), want, OP_TOL, `rope inverse ${c.label}, a transposed value`);
      const xv = await ctx.h.upload(x);
      const identity = { shape, data: f64(x) };
      expectClose(await runValues(ctx.h, "rope", inv, [await ctx.h.dispatch("rope", fwd, [xv], shape, "contract.rope.forward")], shape), identity, OP_TOL, `inverse(rope(x)) ${c.label}`);
      expectClose(await runValues(ctx.h, "rope", fwd, [await ctx.h.dispatch("rope", inv, [xv], shape, "contract.rope.inverse")], shape), identity, OP_TOL, `rope(inverse(x)) ${c.label}`);
    });
  });
}
