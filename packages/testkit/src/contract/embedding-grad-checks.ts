// embedding-grad against its float64 reference (part of backward-row-checks.ts): the scatter-add by id, heavy repeats,
// out-of-range ids as the forward's typed error, and float32 ids (with cross-entropy-grad's float32 targets) as errors.
import { expect, it } from "vitest";
import { type AttnGraphError, Tensor } from "@attngraph/tensor";
import { embeddingGrad64 } from "../reference/backward64.js";
import { attrs } from "./attrs.js";
import { expectTypedError } from "./block-checks.js";
import { expectClose, OP_TOL, runValues, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import type { ContractContext } from "./context.js";
import { expectZeros, f64, hostStrided, onExecutor, range } from "./values.js";

export function embeddingGradChecks(ctx: ContractContext): void {
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
}
