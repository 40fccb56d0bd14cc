// cross-entropy-grad against its float64 reference (part of backward-row-checks.ts): each reduction, grad absent and
// present, ignoreIndex, an all-ignored mean, large logits, strided and transposed inputs, and out-of-range targets as the
// forward's typed error.
import { expect, it } from "vitest";
import { type AttnGraphError, Tensor } from "@attngraph/tensor";
import { crossEntropyGrad64 } from "../reference/backward64.js";
import { attrs } from "./attrs.js";
import { expectTypedError } from "./block-checks.js";
import { expectClose, OP_TOL, runValues, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import type { ContractContext } from "./context.js";
import { expectZeros, f64, hostStrided, onExecutor, range } from "./values.js";

export function crossEntropyGradChecks(ctx: ContractContext): void {
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
}
