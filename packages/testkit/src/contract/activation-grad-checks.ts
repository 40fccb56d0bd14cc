// The gradients of the elementwise activations against their float64 references (part of backward-row-checks.ts):
// gelu-grad (both approximations) and relu's derived gradient as the pointwise kernel runs it.
import { it } from "vitest";
import { pointwiseGrad, reluOp, type Expr } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { geluGrad64, reluGrad64 } from "../reference/backward64.js";
import { relu64 } from "../reference/block64.js";
import { attrs } from "./attrs.js";
import { expectClose, expectExact, OP_TOL, runValues } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import type { ContractContext } from "./context.js";
import { f64, hostStrided, onExecutor } from "./values.js";

/** relu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, relu's input in x1). */
const RELU_GRAD = { expr: (pointwiseGrad(reluOp.pointwise!({}), 0) as { expr: Expr }).expr };

export function activationGradChecks(ctx: ContractContext): void {
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
}
