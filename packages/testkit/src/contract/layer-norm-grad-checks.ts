// layer-norm-grad and layer-norm-weight-grad against their float64 references (part of backward-row-checks.ts): both
// eps values, with and without weight, strided host views and transposed values, a constant row and a row offset by 1e4,
// and a long reduction over rows.
import { it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { layerNormGrad64, layerNormWeightGrad64 } from "../reference/backward64.js";
import { attrs } from "./attrs.js";
import { expectClose, OP_TOL, runValues } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import type { ContractContext } from "./context.js";
import { f64, hostStrided, onExecutor } from "./values.js";

export function layerNormGradChecks(ctx: ContractContext): void {
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
}
