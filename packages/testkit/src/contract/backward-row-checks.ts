// The backward ops of rows and elements against their float64 references (see backward-checks.ts, which runs these
// after its own): layer-norm-grad and layer-norm-weight-grad, gelu-grad, relu's derived gradient, embedding-grad,
// cross-entropy-grad, and rope's `inverse`.
import { expect, it } from "vitest";
import { pointwiseGrad, reluOp, type Expr } from "@attngraph/graph";
import { type AttnGraphError, Tensor } from "@attngraph/tensor";
import {
  crossEntropyGrad64,
  embeddingGrad64,
  geluGrad64,
  layerNormGrad64,
  layerNormWeightGrad64,
  reluGrad64,
} from "../reference/backward64.js";
import { relu64 } from "../reference/block64.js";
import { rope64 } from "../reference/rope64.js";
import { attrs } from "./attrs.js";
import { expectTypedError } from "./block-checks.js";
import { expectClose, expectExact, OP_TOL, runValues, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { ROPE_CASES } from "./rope-cases.js";
import type { ContractContext } from "./context.js";
import { expectZeros, f64, hostStrided, onExecutor, range } from "./values.js";

/** relu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, relu's input in x1). */
const RELU_GRAD = { expr: (pointwiseGrad(reluOp.pointwise!({}), 0) as { expr: Expr }).expr };

export function backwardRowChecks(ctx: ContractContext): void {
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
        expectClose(
          await ctx.h.run("layer-norm-grad", a, [hostStrided(g), hostStrided(x), weight], shape),
          want,
          OP_TOL,
          `${label}, strided views`,
        );
        const wv = weight && (await ctx.h.upload(weight));
        expectClose(
          await runValues(
            ctx.h,
            "layer-norm-grad",
            a,
            [await onExecutor(ctx.h, g), await onExecutor(ctx.h, x, [1, 2, 0]), wv],
            shape,
          ),
          want,
          OP_TOL,
          `${label}, transposed values`,
        );
      }
    }
  });

  it("layer-norm-grad and layer-norm-weight-grad: a constant row (x̂ = 0) and a row offset by 1e4 (statistics two-pass)", async () => {
    const E = 8;
    const x = Tensor.from(
      [...new Array<number>(E).fill(3.25), ...Array.from({ length: E }, (_, i) => 1e4 + (i % 3) * 0.5)],
      [2, E],
    );
    const g = randomTensor(createRng(961), [2, E]);
    const w = randomTensor(createRng(962), [E]);
    const tol = { abs: 1e-4, rel: 1e-4 };
    expectClose(
      await ctx.h.run("layer-norm-grad", attrs.layerNormGrad(), [g, x, w], [2, E]),
      { shape: [2, E], data: layerNormGrad64(f64(g), f64(x), E, 1e-5, f64(w)) },
      tol,
      "layer-norm-grad of a constant row and a row offset by 1e4",
    );
    expectClose(
      await ctx.h.run("layer-norm-weight-grad", attrs.layerNormGrad(), [g, x], [E]),
      { shape: [E], data: layerNormWeightGrad64(f64(g), f64(x), E, 1e-5) },
      tol,
      "layer-norm-weight-grad of a constant row and a row offset by 1e4",
    );
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
      expectClose(
        await ctx.h.run("layer-norm-weight-grad", a, [g, x], [E]),
        want,
        OP_TOL,
        `layer-norm-weight-grad eps ${eps}`,
      );
      expectClose(
        await ctx.h.run("layer-norm-weight-grad", a, [hostStrided(g), hostStrided(x)], [E]),
        want,
        OP_TOL,
        `layer-norm-weight-grad eps ${eps}, strided views`,
      );
      expectClose(
        await runValues(
          ctx.h,
          "layer-norm-weight-grad",
          a,
          [await onExecutor(ctx.h, g, [1, 2, 0]), await onExecutor(ctx.h, x)],
          [E],
        ),
        want,
        OP_TOL,
        `layer-norm-weight-grad eps ${eps}, transposed values`,
      );
    }
  });

  it("layer-norm-weight-grad: a long reduction over 512 rows", async () => {
    const rng = createRng(964);
    const g = randomTensor(rng, [512, 8]);
    const x = randomTensor(rng, [512, 8], (r) => 1 + r.normal());
    expectClose(
      await ctx.h.run("layer-norm-weight-grad", attrs.layerNormGrad(), [g, x], [8]),
      { shape: [8], data: layerNormWeightGrad64(f64(g), f64(x), 8, 1e-5) },
      OP_TOL,
      "layer-norm-weight-grad over 512 rows",
    );
  });

  // ---------------------------------------------------------------------------------------------------- gelu-grad
  for (const approximate of ["none", "tanh"] as const) {
    it(`gelu-grad (${approximate}): grad · gelu'(x) over -10..10 and extremes; strided host views and transposed values`, async () => {
      const values = [...Array.from({ length: 81 }, (_, i) => -10 + i * 0.25), -30, 30, -1e-3, 1e-3, 0, -0];
      const x = Tensor.from(values, [values.length]);
      const g = randomTensor(createRng(970), [values.length]);
      const a = attrs.geluGrad(approximate);
      expectClose(
        await ctx.h.run("gelu-grad", a, [g, x], x.shape),
        { shape: x.shape, data: geluGrad64(f64(g), f64(x), approximate) },
        OP_TOL,
        `gelu-grad ${approximate}`,
      );
      const rng = createRng(971);
      const x2 = randomTensor(rng, [4, 6], (r) => 3 * r.normal());
      const g2 = randomTensor(rng, [4, 6]);
      const want = { shape: [4, 6], data: geluGrad64(f64(g2), f64(x2), approximate) };
      expectClose(
        await ctx.h.run("gelu-grad", a, [hostStrided(g2), hostStrided(x2)], [4, 6]),
        want,
        OP_TOL,
        `gelu-grad ${approximate}, strided views`,
      );
      expectClose(
        await runValues(ctx.h, "gelu-grad", a, [await ctx.h.upload(g2), await onExecutor(ctx.h, x2)], [4, 6]),
        want,
        OP_TOL,
        `gelu-grad ${approximate}, a transposed x`,
      );
    });
  }

  // ---------------------------------------------------------------------------------------------------- relu's gradient
  // The pointwise kernel with relu's derived gradient (grad in x0, relu's input in x1; fed relu outputs here, which
  // relu leaves as they are): a select, as PyTorch's threshold_backward.
  it("relu's gradient: grad where x > 0 or NaN, exactly 0 where x <= 0 (a NaN grad included); strided host views and transposed values", async () => {
    const y = Tensor.from([0, -0, NaN, Infinity, 1e-30, 2.5, 0, 3, 0, 7], [10]);
    const g = Tensor.from([1.5, -2, 3, -4, 5, -6, NaN, NaN, Infinity, 8], [10]);
    expectExact(
      await ctx.h.run("pointwise", RELU_GRAD, [g, y], y.shape),
      { shape: y.shape, data: reluGrad64(f64(g), f64(y)) },
      "relu-grad edge cases",
    );
    const rng = createRng(972);
    const y2 = Tensor.from(relu64(f64(randomTensor(rng, [4, 6], (r) => 3 * r.normal()))), [4, 6]);
    const g2 = randomTensor(rng, [4, 6]);
    const want = { shape: [4, 6], data: reluGrad64(f64(g2), f64(y2)) };
    expectExact(
      await ctx.h.run("pointwise", RELU_GRAD, [hostStrided(g2), hostStrided(y2)], [4, 6]),
      want,
      "relu-grad, strided views",
    );
    expectExact(
      await runValues(ctx.h, "pointwise", RELU_GRAD, [await ctx.h.upload(g2), await onExecutor(ctx.h, y2)], [4, 6]),
      want,
      "relu-grad, a transposed y",
    );
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
      [
        "a transposed grad",
        await runValues(
          ctx.h,
          "embedding-grad",
          a,
          [await ctx.h.upload(embeddingIds), await onExecutor(ctx.h, g)],
          [V, E],
        ),
      ],
    ] as const) {
      expectClose(out, want, OP_TOL, `embedding-grad ${label}`);
      expectZeros(
        out,
        [...range(3 * E, 4 * E), ...range(5 * E, 6 * E)],
        `embedding-grad ${label}: rows 3 and 5, which no id names`,
      );
    }
  });

  it("embedding-grad: 512 positions into 3 rows (heavy repeats accumulate with care)", async () => {
    const rng = createRng(981);
    const ids = Tensor.int32(
      Array.from({ length: 512 }, () => Math.floor(rng.uniform() * 3)),
      [4, 128],
    );
    const g = randomTensor(rng, [4, 128, 8]);
    const out = await ctx.h.run("embedding-grad", attrs.embeddingGrad(4), [ids, g], [4, 8]);
    expectClose(
      out,
      { shape: [4, 8], data: embeddingGrad64(ids.toInt32Array(), f64(g), 4, 8) },
      OP_TOL,
      "embedding-grad of 512 positions",
    );
    expectZeros(out, range(24, 32), "embedding-grad: row 3, which no id names");
  });

  it("embedding-grad: an id outside [0, V) is the forward embedding's kind of typed error, naming the node, position and id; the executor still works after it", async () => {
    const [V, E] = [6, 4];
    const g = randomTensor(createRng(982), [2, 3, E]);
    const gv = await ctx.h.upload(g);
    const table = await ctx.h.upload(randomTensor(createRng(983), [V, E]));
    for (const bad of [V, -1]) {
      const badIds = await ctx.h.upload(Tensor.int32([0, 1, 2, bad, 0, 0], [2, 3]));
      const e = await thrown(async () =>
        ctx.h.dispatch("embedding-grad", attrs.embeddingGrad(V), [badIds, gv], [V, E]),
      );
      expectTypedError(e, `embedding-grad id ${bad}`, new RegExp(`${bad} at \\[1, 0\\]`), /contract\.embedding-grad/);
      const forward = await thrown(async () => ctx.h.dispatch("embedding", attrs.none(), [badIds, table], [2, 3, E]));
      expect((e as AttnGraphError).code, `embedding-grad id ${bad}: the forward's error code`).toBe(
        (forward as AttnGraphError | undefined)?.code,
      );
    }
    const out = await runValues(
      ctx.h,
      "embedding-grad",
      attrs.embeddingGrad(V),
      [await ctx.h.upload(embeddingIds), gv],
      [V, E],
    );
    expectClose(
      out,
      { shape: [V, E], data: embeddingGrad64(embeddingIds.toInt32Array(), f64(g), V, E) },
      OP_TOL,
      "embedding-grad after an error",
    );
  });

  it("embedding-grad and cross-entropy-grad: float32 ids or targets are typed errors naming int32", async () => {
    const floatIds = await ctx.h.upload(Tensor.from([0, 1], [2]));
    const g = await ctx.h.upload(randomTensor(createRng(984), [2, 4]));
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("embedding-grad", attrs.embeddingGrad(3), [floatIds, g], [3, 4])),
      "float32 ids",
      /int32/,
    );
    expectTypedError(
      await thrown(async () =>
        ctx.h.dispatch("cross-entropy-grad", attrs.crossEntropyGrad(), [g, floatIds, undefined], [2, 4]),
      ),
      "float32 targets",
      /int32/,
    );
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
          const out = await ctx.h.run(
            "cross-entropy-grad",
            attrs.crossEntropyGrad({ reduction, ignoreIndex }),
            [logits, t, g],
            [2, 3, V],
          );
          expectClose(
            out,
            {
              shape: [2, 3, V],
              data: crossEntropyGrad64(f64(logits), V, t.toInt32Array(), reduction, ignoreIndex, g && f64(g)),
            },
            OP_TOL,
            label,
          );
          if (ignoreIndex !== null)
            expectZeros(out, [...range(V, 2 * V), ...range(3 * V, 4 * V)], `${label}: ignored positions`);
        }
      }
    });
  }

  it("cross-entropy-grad: an all-ignored mean gives zeros; logits of ±1000 and 1e4 stay finite; strided logits", async () => {
    const rng = createRng(991);
    const logits = randomTensor(rng, [2, 3, V]);
    const none = Tensor.int32(new Array<number>(6).fill(-100), [2, 3]);
    const zero = await ctx.h.run(
      "cross-entropy-grad",
      attrs.crossEntropyGrad({ ignoreIndex: -100 }),
      [logits, none, Tensor.from([1], [])],
      [2, 3, V],
    );
    expectZeros(zero, range(0, 6 * V), "a mean over no counted position");
    const huge = Tensor.from([1000, 0, -1000, 5, 1e4, 1e4 - 1], [2, 3]);
    const ht = Tensor.int32([0, 1], [2]);
    const out = await ctx.h.run(
      "cross-entropy-grad",
      attrs.crossEntropyGrad({ reduction: "sum" }),
      [huge, ht, undefined],
      [2, 3],
    );
    expect(out.toFloat32Array().every(Number.isFinite), "large logits").toBe(true);
    expectClose(
      out,
      { shape: [2, 3], data: crossEntropyGrad64(f64(huge), 3, [0, 1], "sum") },
      OP_TOL,
      "cross-entropy-grad of large logits",
    );
    const t = targets.toInt32Array();
    const g = randomTensor(rng, [2, 3]);
    const want = { shape: [2, 3, V], data: crossEntropyGrad64(f64(logits), V, t, "none", null, f64(g)) };
    const a = attrs.crossEntropyGrad({ reduction: "none" });
    expectClose(
      await ctx.h.run("cross-entropy-grad", a, [hostStrided(logits), targets, hostStrided(g)], [2, 3, V]),
      want,
      OP_TOL,
      "cross-entropy-grad of strided logits and grad",
    );
    expectClose(
      await runValues(
        ctx.h,
        "cross-entropy-grad",
        a,
        [await onExecutor(ctx.h, logits), await ctx.h.upload(targets), await onExecutor(ctx.h, g)],
        [2, 3, V],
      ),
      want,
      OP_TOL,
      "cross-entropy-grad of transposed logits and grad",
    );
  });

  it("cross-entropy-grad: a target outside [0, V) is the forward's kind of typed error, naming the node, position and target; the executor still works after it", async () => {
    const logits = randomTensor(createRng(992), [2, 3, V]);
    const lv = await ctx.h.upload(logits);
    for (const [bad, ignoreIndex] of [
      [V, null],
      [-1, -100],
    ] as const) {
      const badTargets = await ctx.h.upload(Tensor.int32([0, 1, 2, 3, bad, 0], [2, 3]));
      const a = attrs.crossEntropyGrad({ ignoreIndex });
      const e = await thrown(async () =>
        ctx.h.dispatch("cross-entropy-grad", a, [lv, badTargets, undefined], [2, 3, V]),
      );
      expectTypedError(
        e,
        `cross-entropy-grad target ${bad}`,
        new RegExp(`${bad} at \\[1, 1\\]`),
        /contract\.cross-entropy-grad/,
      );
      const forward = await thrown(async () =>
        ctx.h.dispatch("cross-entropy", attrs.crossEntropy({ ignoreIndex }), [lv, badTargets], []),
      );
      expect((e as AttnGraphError).code, `cross-entropy-grad target ${bad}: the forward's error code`).toBe(
        (forward as AttnGraphError | undefined)?.code,
      );
    }
    const out = await runValues(
      ctx.h,
      "cross-entropy-grad",
      attrs.crossEntropyGrad(),
      [lv, await ctx.h.upload(targets), undefined],
      [2, 3, V],
    );
    expectClose(
      out,
      { shape: [2, 3, V], data: crossEntropyGrad64(f64(logits), V, targets.toInt32Array(), "mean") },
      OP_TOL,
      "cross-entropy-grad after an error",
    );
  });

  // ---------------------------------------------------------------------------------------------------- rope inverse
  ROPE_CASES.forEach((c, n) => {
    it(`rope with inverse: true (${c.label}): equals the reference on strided inputs; inverse(rope(x)) = x and rope(inverse(x)) = x on the executor`, async () => {
      const shape = [2, c.H, c.L, c.D];
      const x = randomTensor(createRng(1000 + n), shape);
      const inv = attrs.rope({ ...c.attrs, inverse: true });
      const fwd = attrs.rope(c.attrs);
      const want = { shape, data: rope64(f64(x), 2, c.H, c.L, c.D, inv) };
      expectClose(await ctx.h.run("rope", inv, [x], shape), want, OP_TOL, `rope inverse ${c.label}`);
      expectClose(
        await ctx.h.run("rope", inv, [hostStrided(x)], shape),
        want,
        OP_TOL,
        `rope inverse ${c.label}, a strided view`,
      );
      expectClose(
        await runValues(ctx.h, "rope", inv, [await onExecutor(ctx.h, x)], shape),
        want,
        OP_TOL,
        `rope inverse ${c.label}, a transposed value`,
      );
      const xv = await ctx.h.upload(x);
      const identity = { shape, data: f64(x) };
      // Each way round: the first rope dispatched on x's value, the second on its result, on the executor.
      for (const [first, second, node, what] of [
        [fwd, inv, "contract.rope.forward", "inverse(rope(x))"],
        [inv, fwd, "contract.rope.inverse", "rope(inverse(x))"],
      ] as const) {
        const once = await ctx.h.dispatch("rope", first, [xv], shape, node);
        expectClose(await runValues(ctx.h, "rope", second, [once], shape), identity, OP_TOL, `${what} ${c.label}`);
      }
    });
  });
}
