// The ops of a Llama block against their float64 references (reference/llama64.ts): rms-norm (weighted or not, on a
// strided x, a zero row), silu over a wide range with large |x| and +∞ (no overflow to NaN), broadcasting mul, and the
// backward ops rms-norm-grad, rms-norm-weight-grad and silu's derived gradient on strided inputs. silu runs as the
// scheduler lowers it: the pointwise kernel with silu's expression (and its derivative). Wrong dtypes are typed errors.
import { it } from "vitest";
import { pointwiseGrad, siluOp, type Expr } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { mul64, rmsNorm64, rmsNormGrad64, rmsNormWeightGrad64, silu64, siluGrad64 } from "../reference/llama64.js";
import { attrs } from "./attrs.js";
import { broadcastChecks, type BroadcastCase } from "./broadcast-checks.js";
import { expectTypedError } from "./block-checks.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL, runValues, stridedOn, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

/** The pointwise kernel's attributes for silu and for its gradient (the output's gradient in x0, x in x1). */
const SILU = { expr: siluOp.pointwise!({}) };
const SILU_GRAD = { expr: (pointwiseGrad(SILU.expr, 0) as { expr: Expr }).expr };

const eps = (e: number) => ({ eps: e });

export function llamaChecks(ctx: ContractContext): void {
  it("rms-norm: weighted and plain, on a strided x; a zero row gives zeros; a strided value", async () => {
    const rng = createRng(500);
    const E = 8;
    const x = randomTensor(rng, [2, 3, E]);
    const strided = randomTensor(rng, [2, E, 3]).permute([0, 2, 1]);
    const w = randomTensor(rng, [E]);
    for (const [label, input] of [
      ["x", x],
      ["strided x", strided],
    ] as const) {
      const weighted = await ctx.h.run("rms-norm", eps(1e-6), [input, w], [2, 3, E]);
      expectClose(
        weighted,
        { shape: [2, 3, E], data: rmsNorm64(f64(input), E, 1e-6, f64(w)) },
        OP_TOL,
        `rms-norm of ${label}`,
      );
      const plain = await ctx.h.run("rms-norm", eps(1e-2), [input, undefined], [2, 3, E]);
      expectClose(
        plain,
        { shape: [2, 3, E], data: rmsNorm64(f64(input), E, 1e-2) },
        OP_TOL,
        `rms-norm (no weight, eps 1e-2) of ${label}`,
      );
    }
    const zero = await ctx.h.run("rms-norm", eps(1e-6), [Tensor.from(new Array<number>(E).fill(0), [1, E]), w], [1, E]);
    expectClose(zero, { shape: [1, E], data: new Float64Array(E) }, { abs: 0, rel: 0 }, "rms-norm of a zero row");
    const onDevice = await stridedOn(ctx.h, strided.contiguous(), [0, 2, 1]);
    expectClose(
      await runValues(ctx.h, "rms-norm", eps(1e-6), [onDevice, await ctx.h.upload(w)], [2, 3, E]),
      { shape: [2, 3, E], data: rmsNorm64(f64(strided), E, 1e-6, f64(w)) },
      OP_TOL,
      "rms-norm of a value",
    );
  });

  it("silu: -20..20, ±100, ±3e38 and +∞ (no overflow to NaN); a strided input", async () => {
    const values = [
      ...Array.from({ length: 81 }, (_, i) => -20 + i * 0.5),
      -100,
      100,
      -1e-3,
      1e-3,
      0,
      3e38,
      -3e38,
      Infinity,
    ];
    const x = Tensor.from(values, [values.length]);
    expectClose(
      await ctx.h.run("pointwise", SILU, [x], x.shape),
      { shape: x.shape, data: silu64(f64(x)) },
      OP_TOL,
      "silu",
    );
    const strided = randomTensor(createRng(501), [4, 6], (r) => 3 * r.normal()).permute([1, 0]);
    expectClose(
      await ctx.h.run("pointwise", SILU, [strided], [6, 4]),
      { shape: [6, 4], data: silu64(f64(strided)) },
      OP_TOL,
      "silu of a strided input",
    );
  });

  const mulCases: BroadcastCase[] = [
    ["same shape", [2, 3, 4], [2, 3, 4]],
    ["a scale [E] over [B, T, E]", [2, 3, 4], [4]],
    ["a stretched a", [1, 3, 1], [2, 3, 4]],
  ];
  broadcastChecks(ctx, { kind: "mul", title: "mul broadcasts", cases: mulCases, seed: () => 502, reference: mul64 });

  it("rms-norm-grad and rms-norm-weight-grad: weighted and plain, strided grad", async () => {
    const rng = createRng(503);
    const E = 6;
    const x = randomTensor(rng, [3, 4, E]);
    const g = randomTensor(rng, [3, E, 4]).permute([0, 2, 1]);
    const w = randomTensor(rng, [E]);
    expectClose(
      await ctx.h.run("rms-norm-grad", eps(1e-6), [g, x, w], [3, 4, E]),
      { shape: [3, 4, E], data: rmsNormGrad64(f64(g), f64(x), E, 1e-6, f64(w)) },
      OP_TOL,
      "rms-norm-grad",
    );
    expectClose(
      await ctx.h.run("rms-norm-grad", eps(1e-3), [g, x, undefined], [3, 4, E]),
      { shape: [3, 4, E], data: rmsNormGrad64(f64(g), f64(x), E, 1e-3) },
      OP_TOL,
      "rms-norm-grad without weight",
    );
    expectClose(
      await ctx.h.run("rms-norm-weight-grad", eps(1e-6), [g, x], [E]),
      { shape: [E], data: rmsNormWeightGrad64(f64(g), f64(x), E, 1e-6) },
      { abs: 1e-5, rel: 1e-4 },
      "rms-norm-weight-grad",
    );
  });

  it("silu-grad: a wide range with large |x|, strided inputs", async () => {
    const values = [...Array.from({ length: 41 }, (_, i) => -20 + i), -100, 100, 0];
    const x = Tensor.from(values, [values.length]);
    const g = randomTensor(createRng(504), [values.length]);
    expectClose(
      await ctx.h.run("pointwise", SILU_GRAD, [g, x], x.shape),
      { shape: x.shape, data: siluGrad64(f64(g), f64(x)) },
      OP_TOL,
      "silu-grad",
    );
    const xs = randomTensor(createRng(505), [5, 3], (r) => 3 * r.normal()).permute([1, 0]);
    const gs = randomTensor(createRng(506), [5, 3]).permute([1, 0]);
    expectClose(
      await ctx.h.run("pointwise", SILU_GRAD, [gs, xs], [3, 5]),
      { shape: [3, 5], data: siluGrad64(f64(gs), f64(xs)) },
      OP_TOL,
      "silu-grad strided",
    );
  });

  it("int32 into rms-norm, silu or mul is a typed error", async () => {
    const intX = await ctx.h.upload(Tensor.int32([1, 2, 3], [3]));
    const fx = await ctx.h.upload(Tensor.from([1, 2, 3], [3]));
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("rms-norm", eps(1e-6), [intX, undefined], [3])),
      "int32 into rms-norm",
      /float32/,
    );
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("pointwise", SILU, [intX], [3])),
      "int32 into silu",
      /float32/,
    );
    expectTypedError(
      await thrown(async () => ctx.h.dispatch("mul", attrs.none(), [fx, intX], [3])),
      "int32 into mul",
      /float32/,
    );
  });
}
