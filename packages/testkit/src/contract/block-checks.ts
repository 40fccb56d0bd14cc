// The ops of a transformer block and its loss against the float64 reference (reference/block64.ts): layer norm (affine
// or not, strided, constant and offset rows), GELU in both forms over a wide range, ReLU exactly (NaN, ±∞, ±0), broadcasting add, embedding and
// cross-entropy with int32 ids (out-of-range ids and targets are errors naming the position), and the mask op's user
// mask and additive bias composed with causal and padding. Wrong dtypes in either direction are typed errors.
import { expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { reluOp } from "@attngraph/graph";
import { add64, crossEntropy64, embedding64, gelu64, layerNorm64, maskFull64, relu64 } from "../reference/block64.js";
import { attrs } from "./attrs.js";
import { broadcastChecks, type BroadcastCase } from "./broadcast-checks.js";
import type { ContractContext } from "./context.js";
import { expectClose, expectExact, OP_TOL, runValues, stridedOn, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

/** relu as the scheduler lowers it: the pointwise kernel with relu's expression over x0. */
const RELU = { expr: reluOp.pointwise!({}) };

/** Asserts `e` is an AttnGraphError whose message matches every pattern. */
export function expectTypedError(e: unknown, label: string, ...patterns: RegExp[]): void {
  expect(e, `${label}: the kernel returned instead of throwing`).toBeDefined();
  expect(AttnGraphError.isInstance(e), `${label}: expected an AttnGraphError, got ${String(e)}`).toBe(true);
  for (const p of patterns) expect((e as Error).message, label).toMatch(p);
}

export function blockChecks(ctx: ContractContext): void {
  it("layer-norm: affine and plain, on a strided x; a constant row gives the bias; rows offset by 1e4 stay accurate", async () => {
    const rng = createRng(400);
    const E = 8;
    const x = randomTensor(rng, [2, 3, E]);
    const strided = randomTensor(rng, [2, E, 3]).permute([0, 2, 1]); // [2, 3, E], last axis not contiguous
    const w = randomTensor(rng, [E]);
    const b = randomTensor(rng, [E]);
    for (const [label, input] of [
      ["x", x],
      ["strided x", strided],
    ] as const) {
      const affine = await ctx.h.run("layer-norm", attrs.layerNorm(), [input, w, b], [2, 3, E]);
      expectClose(
        affine,
        { shape: [2, 3, E], data: layerNorm64(f64(input), E, 1e-5, f64(w), f64(b)) },
        OP_TOL,
        `layer-norm of ${label}`,
      );
      const plain = await ctx.h.run("layer-norm", attrs.layerNorm(1e-3), [input, undefined, undefined], [2, 3, E]);
      expectClose(
        plain,
        { shape: [2, 3, E], data: layerNorm64(f64(input), E, 1e-3) },
        OP_TOL,
        `layer-norm (no affine, eps 1e-3) of ${label}`,
      );
    }
    // A constant row: its deviations are exactly 0, so the output is exactly the bias (never 0/0).
    const constant = Tensor.from(
      [...new Array<number>(E).fill(3.25), ...Array.from({ length: E }, (_, i) => 1e4 + (i % 3) * 0.5)],
      [2, E],
    );
    const out = await ctx.h.run("layer-norm", attrs.layerNorm(), [constant, w, b], [2, E]);
    expectClose(
      out,
      { shape: [2, E], data: layerNorm64(f64(constant), E, 1e-5, f64(w), f64(b)) },
      { abs: 1e-4, rel: 1e-4 },
      "layer-norm of a constant row and a row offset by 1e4",
    );
    expect(out.toArray().slice(0, E), "a constant row gives exactly the bias").toEqual(b.toArray());
  });

  for (const approximate of ["none", "tanh"] as const) {
    it(`gelu (approximate ${approximate}): -10..10, extremes and a strided input`, async () => {
      const values = [...Array.from({ length: 81 }, (_, i) => -10 + i * 0.25), -30, 30, -1e-3, 1e-3, 0, -0];
      const x = Tensor.from(values, [values.length]);
      expectClose(
        await ctx.h.run("gelu", attrs.gelu(approximate), [x], x.shape),
        { shape: x.shape, data: gelu64(f64(x), approximate) },
        OP_TOL,
        `gelu ${approximate}`,
      );
      const strided = randomTensor(createRng(401), [4, 6], (r) => 3 * r.normal()).permute([1, 0]);
      expectClose(
        await ctx.h.run("gelu", attrs.gelu(approximate), [strided], [6, 4]),
        { shape: [6, 4], data: gelu64(f64(strided), approximate) },
        OP_TOL,
        `gelu ${approximate} of a strided input`,
      );
    });
  }

  it("relu: max(x, 0) exactly; NaN and +∞ kept, −∞ and −0 give 0; a strided input and a strided value", async () => {
    const values = [
      ...Array.from({ length: 41 }, (_, i) => -5 + i * 0.25),
      NaN,
      Infinity,
      -Infinity,
      -0,
      0,
      -1e-30,
      1e-30,
      3e38,
      -3e38,
    ];
    const x = Tensor.from(values, [values.length]);
    expectExact(await ctx.h.run("pointwise", RELU, [x], x.shape), { shape: x.shape, data: relu64(f64(x)) }, "relu");
    const strided = randomTensor(createRng(402), [4, 6], (r) => 3 * r.normal()).permute([1, 0]);
    expectExact(
      await ctx.h.run("pointwise", RELU, [strided], [6, 4]),
      { shape: [6, 4], data: relu64(f64(strided)) },
      "relu of a strided input",
    );
    const onDevice = await stridedOn(ctx.h, strided.contiguous(), [1, 0]); // strided's values, made by a transpose
    expectExact(
      await runValues(ctx.h, "pointwise", RELU, [onDevice], [6, 4]),
      { shape: [6, 4], data: relu64(f64(strided)) },
      "relu of a strided value",
    );
  });

  const addCases: BroadcastCase[] = [
    ["same shape", [2, 3, 4], [2, 3, 4]],
    ["a bias [E] over [B, T, E]", [2, 3, 4], [4]],
    ["pos_embed [1, T, E] over the batch", [2, 3, 4], [1, 3, 4]],
    ["both stretch: [2, 1, 4] + [1, 3, 1]", [2, 1, 4], [1, 3, 1]],
    ["b has more axes: [3, 4] + [2, 3, 4]", [3, 4], [2, 3, 4]],
  ];
  const addSeed = (as: readonly number[], bs: readonly number[]) => 402 + as.length * 7 + bs.length;
  broadcastChecks(ctx, { kind: "add", title: "add", cases: addCases, seed: addSeed, reference: add64 });

  it("add: a strided a plus a broadcast b", async () => {
    const rng = createRng(403);
    const a = randomTensor(rng, [4, 3, 2]).permute([2, 1, 0]); // [2, 3, 4], strided
    const b = randomTensor(rng, [1, 3, 4]);
    const want = add64(f64(a), [2, 3, 4], f64(b), [1, 3, 4]);
    expectClose(await ctx.h.run("add", attrs.none(), [a, b], [2, 3, 4]), want, OP_TOL, "add strided");
  });

  it("embedding: int32 ids [B, T] pick rows of [V, E]; repeated ids; an id outside [0, V) is an error naming its position", async () => {
    const rng = createRng(404);
    const table = randomTensor(rng, [5, 4]);
    const ids = Tensor.int32([4, 0, 2, 2, 1, 4], [2, 3]);
    const out = await ctx.h.run("embedding", attrs.none(), [ids, table], [2, 3, 4]);
    expectClose(
      out,
      { shape: [2, 3, 4], data: embedding64(ids.toInt32Array(), f64(table), 5, 4) },
      { abs: 0, rel: 0 },
      "embedding",
    );
    for (const [bad, at] of [
      [5, "[1, 0]"],
      [-1, "[1, 0]"],
    ] as const) {
      const badIds = await ctx.h.upload(Tensor.int32([0, 1, 2, bad, 0, 0], [2, 3]));
      const e = await thrown(async () =>
        ctx.h.dispatch("embedding", attrs.none(), [badIds, await ctx.h.upload(table)], [2, 3, 4]),
      );
      expectTypedError(
        e,
        `embedding id ${bad}`,
        new RegExp(`${bad} at \\${at.slice(0, -1)}\\]`),
        /contract\.embedding\.ids/,
      );
    }
  });

  it("cross-entropy: mean, sum and per position over [B, T, V]; ignoreIndex; an all-ignored mean is 0; large logits stay finite", async () => {
    const rng = createRng(405);
    const V = 5;
    const logits = randomTensor(rng, [2, 3, V], (r) => 2 * r.normal());
    const targets = Tensor.int32([0, 4, 2, 1, 3, 3], [2, 3]);
    const t = targets.toInt32Array();
    for (const reduction of ["mean", "sum", "none"] as const) {
      const shape = reduction === "none" ? [2, 3] : [];
      const out = await ctx.h.run("cross-entropy", attrs.crossEntropy({ reduction }), [logits, targets], shape);
      expectClose(
        out,
        { shape, data: crossEntropy64(f64(logits), V, t, reduction) },
        OP_TOL,
        `cross-entropy ${reduction}`,
      );
    }
    const ignoring = Tensor.int32([0, -100, 2, -100, 3, 3], [2, 3]);
    const mean = await ctx.h.run("cross-entropy", attrs.crossEntropy({ ignoreIndex: -100 }), [logits, ignoring], []);
    expectClose(
      mean,
      { shape: [], data: crossEntropy64(f64(logits), V, ignoring.toInt32Array(), "mean", -100) },
      OP_TOL,
      "cross-entropy ignoreIndex",
    );
    const none = Tensor.int32(new Array<number>(6).fill(-100), [2, 3]);
    const zero = await ctx.h.run("cross-entropy", attrs.crossEntropy({ ignoreIndex: -100 }), [logits, none], []);
    expect(zero.toArray(), "a mean over no counted position").toEqual([0]);
    const huge = Tensor.from([1000, 0, -1000, 5, 1e4, 1e4 - 1], [2, 3]);
    const ht = Tensor.int32([0, 1], [2]);
    expectClose(
      await ctx.h.run("cross-entropy", attrs.crossEntropy({ reduction: "none" }), [huge, ht], [2]),
      { shape: [2], data: crossEntropy64(f64(huge), 3, [0, 1], "none") },
      OP_TOL,
      "cross-entropy of large logits",
    );
  });

  it("cross-entropy: a target outside [0, V) is an error naming its position", async () => {
    const logits = await ctx.h.upload(randomTensor(createRng(406), [2, 3, 4]));
    const bad = await ctx.h.upload(Tensor.int32([0, 1, 2, 3, 4, 0], [2, 3]));
    const e = await thrown(async () => ctx.h.dispatch("cross-entropy", attrs.crossEntropy(), [logits, bad], []));
    expectTypedError(e, "target 4 of 4 classes", /4 at \[1, 1\]/, /contract\.cross-entropy\.targets/);
  });

  it("embedding and cross-entropy: float32 ids or targets, and int32 data in a float slot, are typed errors", async () => {
    const table = await ctx.h.upload(randomTensor(createRng(407), [5, 4]));
    const floatIds = await ctx.h.upload(Tensor.from([0, 1], [2]));
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("embedding", attrs.none(), [floatIds, table], [2, 4])),
      "float32 ids",
      /int32/,
    );
    const intX = await ctx.h.upload(Tensor.int32([1, 2, 3], [3]));
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("gelu", attrs.gelu(), [intX], [3])),
      "int32 into gelu",
      /float32/,
    );
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("pointwise", RELU, [intX], [3])),
      "int32 into relu",
      /float32/,
    );
  });

  const userMasks: { label: string; L: number; S: number; shape: number[]; causal?: boolean; pad?: number[] }[] = [
    { label: "[L, S]", L: 4, S: 5, shape: [4, 5] },
    { label: "[B, L, S] with causal", L: 4, S: 4, shape: [2, 4, 4], causal: true },
    { label: "[B, H, L, S] with key padding", L: 3, S: 4, shape: [2, 3, 3, 4], pad: [0, 0, 0, 1, 1, 0, 0, 0] },
    { label: "[1, L, 1]: a whole query row hidden in every batch", L: 3, S: 4, shape: [1, 3, 1] },
  ];
  for (const c of userMasks) {
    it(`mask: a user 0/1 mask ${c.label}; hidden entries exactly −∞, visible ones unchanged`, async () => {
      const rng = createRng(408 + c.shape.length);
      const B = 2;
      const H = 3;
      const scores = randomTensor(rng, [B, H, c.L, c.S], (r) => 3 * r.normal());
      const user = randomTensor(rng, c.shape, (r, i) =>
        c.shape.length === 3 && c.shape[2] === 1 ? (i === 1 ? 0 : 1) : r.uniform() < 0.3 ? 0 : 1,
      );
      const pad = c.pad ? Tensor.from(c.pad, [B, c.S]) : undefined;
      const a = attrs.mask({ causal: c.causal ?? false });
      const out = await ctx.h.run("mask", a, [scores, pad, user, undefined], [B, H, c.L, c.S]);
      const want = maskFull64(f64(scores), B, H, c.L, c.S, a, pad && f64(pad), { shape: c.shape, data: f64(user) });
      expectClose(out, { shape: scores.shape, data: want }, { abs: 0, rel: 0 }, `user mask ${c.label}`);
    });
  }

  it("mask: an additive bias (with −∞ entries) after the scale, composed with a user mask and causal", async () => {
    const rng = createRng(412);
    const [B, H, L, S] = [2, 2, 4, 4];
    const scores = randomTensor(rng, [B, H, L, S]);
    const user = randomTensor(rng, [L, S], (r) => (r.uniform() < 0.2 ? 0 : 1));
    const bias = randomTensor(rng, [B, 1, L, S], (r) => (r.uniform() < 0.15 ? -Infinity : r.normal()));
    const a = attrs.mask({ causal: true, scale: 0.5 });
    const out = await ctx.h.run("mask", a, [scores, undefined, user, bias], [B, H, L, S]);
    const want = maskFull64(
      f64(scores),
      B,
      H,
      L,
      S,
      a,
      undefined,
      { shape: [L, S], data: f64(user) },
      { shape: [B, 1, L, S], data: f64(bias) },
    );
    expectClose(out, { shape: scores.shape, data: want }, OP_TOL, "mask with bias");
  });

  for (const [label, value] of [
    ["2", 2],
    ["NaN", NaN],
    ["0.5", 0.5],
  ] as const) {
    it(`mask: a user mask value of ${label} is a typed error naming the element, never a result`, async () => {
      const scores = await ctx.h.upload(randomTensor(createRng(413), [1, 1, 2, 3]));
      const user = await ctx.h.upload(Tensor.from([1, 1, 0, 1, value, 1], [2, 3]));
      const e = await thrown(async () =>
        ctx.h.dispatch("mask", attrs.mask(), [scores, undefined, user, undefined], [1, 1, 2, 3]),
      );
      expectTypedError(e, `mask value ${label}`, /\[1, 1\]/, /contract\.mask\.mask/);
    });
  }

  it("mask: a user mask of the wrong shape is a typed error naming the input", async () => {
    const scores = await ctx.h.upload(randomTensor(createRng(414), [1, 2, 3, 4]));
    const user = await ctx.h.upload(Tensor.from(new Array<number>(12).fill(1), [4, 3]));
    expectTypedError(
      await thrown(async () =>
        ctx.h.dispatch("mask", attrs.mask(), [scores, undefined, user, undefined], [1, 2, 3, 4]),
      ),
      "mask [4, 3]",
      /contract\.mask\.mask/,
    );
  });

  it("strided values made on the executor (transpose views): layer-norm, gelu, add, embedding's table, cross-entropy's logits, a user mask", async () => {
    const rng = createRng(415);
    const h = ctx.h;
    const x = randomTensor(rng, [2, 3, 8], (r) => 2 * r.normal());
    const sx = await stridedOn(h, x, [1, 2, 0]); // [2, 3, 8] viewed from a dense [8, 2, 3] upload
    const w = randomTensor(rng, [8]);
    const bias = randomTensor(rng, [8]);
    expectClose(
      await runValues(h, "layer-norm", attrs.layerNorm(), [sx, await h.upload(w), await h.upload(bias)], [2, 3, 8]),
      { shape: [2, 3, 8], data: layerNorm64(f64(x), 8, 1e-5, f64(w), f64(bias)) },
      OP_TOL,
      "layer-norm of a strided value",
    );
    expectClose(
      await runValues(h, "gelu", attrs.gelu(), [sx], [2, 3, 8]),
      { shape: [2, 3, 8], data: gelu64(f64(x), "none") },
      OP_TOL,
      "gelu of a strided value",
    );
    const b = randomTensor(rng, [1, 3, 8]);
    const want = add64(f64(x), [2, 3, 8], f64(b), [1, 3, 8]);
    expectClose(
      await runValues(h, "add", attrs.none(), [sx, await h.upload(b)], [2, 3, 8]),
      want,
      OP_TOL,
      "add of a strided value",
    );
    const table = randomTensor(rng, [5, 4]);
    const ids = Tensor.int32([4, 0, 3, 1], [2, 2]);
    expectClose(
      await runValues(
        h,
        "embedding",
        attrs.none(),
        [await h.upload(ids), await stridedOn(h, table, [1, 0])],
        [2, 2, 4],
      ),
      { shape: [2, 2, 4], data: embedding64(ids.toInt32Array(), f64(table), 5, 4) },
      { abs: 0, rel: 0 },
      "embedding of a strided table",
    );
    const logits = randomTensor(rng, [3, 5]);
    const targets = Tensor.int32([4, 0, 2], [3]);
    expectClose(
      await runValues(
        h,
        "cross-entropy",
        attrs.crossEntropy({ reduction: "none" }),
        [await stridedOn(h, logits, [1, 0]), await h.upload(targets)],
        [3],
      ),
      { shape: [3], data: crossEntropy64(f64(logits), 5, [4, 0, 2], "none") },
      OP_TOL,
      "cross-entropy of strided logits",
    );
    const scores = randomTensor(rng, [1, 2, 3, 4]);
    const user = Tensor.from([1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1], [3, 4]);
    const m = maskFull64(f64(scores), 1, 2, 3, 4, attrs.mask(), undefined, { shape: [3, 4], data: f64(user) });
    expectClose(
      await runValues(
        h,
        "mask",
        attrs.mask(),
        [await h.upload(scores), undefined, await stridedOn(h, user, [1, 0]), undefined],
        [1, 2, 3, 4],
      ),
      { shape: [1, 2, 3, 4], data: m },
      { abs: 0, rel: 0 },
      "mask with a strided user mask",
    );
  });
}
