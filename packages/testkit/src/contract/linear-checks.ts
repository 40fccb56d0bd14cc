// Matrix ops and views against the float64 reference: projection and out-proj (with and without bias, on strided
// input), score and weighted-sum with shared kv heads (H=4 with Hkv = 4, 2, 1), reshape/transpose/slice on views.
// Legend: B batch, H heads, Hkv kv heads, L query length, S key length, D head dim.
import { it } from "vitest";
import type { Tensor } from "@attngraph/tensor";
import { linear64, score64, weightedSum64 } from "../reference/ops64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, expectExact, OP_TOL } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

export function linearChecks(ctx: ContractContext): void {
  for (const kind of ["projection", "out-proj"] as const) {
    it(`${kind}: x · Wᵀ with and without bias, also on a strided x`, async () => {
      const rng = createRng(kind.length);
      const x = randomTensor(rng, [2, 3, 5]); // [B, L, In]
      const xView = randomTensor(rng, [2, 5, 3]).permute([0, 2, 1]); // [B, L, In], not contiguous
      const w = randomTensor(rng, [4, 5]); // [Out, In]
      const b = randomTensor(rng, [4]);
      for (const [label, input] of [
        ["x", x],
        ["strided x", xView],
      ] as const) {
        const plain = await ctx.h.run(kind, attrs.none(), [input, w, undefined], [2, 3, 4]);
        expectClose(
          plain,
          { shape: [2, 3, 4], data: linear64(f64(input), 5, f64(w), 4) },
          OP_TOL,
          `${kind} of ${label}`,
        );
        const biased = await ctx.h.run(kind, attrs.none(), [input, w, b], [2, 3, 4]);
        expectClose(
          biased,
          { shape: [2, 3, 4], data: linear64(f64(input), 5, f64(w), 4, f64(b)) },
          OP_TOL,
          `${kind} of ${label} + bias`,
        );
      }
    });
  }

  for (const Hkv of [4, 2, 1]) {
    const dims = { B: 2, H: 4, Hkv, L: 3, S: 5, D: 8 };
    const { B, H, L, S, D } = dims;

    it(`score: q·kᵀ per head with H=${H}, Hkv=${Hkv}`, async () => {
      const rng = createRng(100 + Hkv);
      const q = randomTensor(rng, [B, H, L, D]);
      const k = randomTensor(rng, [B, Hkv, S, D]);
      const out = await ctx.h.run("score", attrs.none(), [q, k], [B, H, L, S]);
      expectClose(out, { shape: [B, H, L, S], data: score64(f64(q), f64(k), dims) }, OP_TOL, `score H=${H} Hkv=${Hkv}`);
    });

    it(`weighted-sum: weights·v per head with H=${H}, Hkv=${Hkv}`, async () => {
      const rng = createRng(200 + Hkv);
      const w = randomTensor(rng, [B, H, L, S], (r) => r.uniform());
      const v = randomTensor(rng, [B, Hkv, S, D]);
      const out = await ctx.h.run("weighted-sum", attrs.none(), [w, v], [B, H, L, D]);
      expectClose(
        out,
        { shape: [B, H, L, D], data: weightedSum64(f64(w), f64(v), dims) },
        OP_TOL,
        `weighted-sum H=${H} Hkv=${Hkv}`,
      );
    });
  }

  it("reshape: same elements in row-major order, from a contiguous tensor and from a strided view", async () => {
    const rng = createRng(300);
    const x = randomTensor(rng, [2, 3, 4]);
    expectExact(
      await ctx.h.run("reshape", attrs.reshape([6, 4]), [x], [6, 4]),
      { shape: [6, 4], data: x.toFloat32Array() },
      "reshape",
    );
    const view = randomTensor(rng, [2, 4, 3]).permute([0, 2, 1]); // [2, 3, 4], not contiguous
    expectExact(
      await ctx.h.run("reshape", attrs.reshape([2, 12]), [view], [2, 12]),
      { shape: [2, 12], data: view.toFloat32Array() },
      "reshape of a view",
    );
  });

  it("transpose: output dim i is input dim perm[i]", async () => {
    const rng = createRng(301);
    const x = randomTensor(rng, [2, 3, 4, 5]); // [B, L, H, D]
    const perm = [0, 2, 1, 3]; // → [B, H, L, D]
    expectExact(
      await ctx.h.run("transpose", attrs.transpose(perm), [x], [2, 4, 3, 5]),
      permute64(x, perm),
      "transpose [0, 2, 1, 3]",
    );
    const perm2 = [3, 1, 0, 2];
    expectExact(
      await ctx.h.run("transpose", attrs.transpose(perm2), [x], [5, 3, 2, 4]),
      permute64(x, perm2),
      "transpose [3, 1, 0, 2]",
    );
  });

  it("slice: size entries of one axis from start, negative axis and strided input included", async () => {
    const rng = createRng(302);
    const x = randomTensor(rng, [2, 3, 12]); // a fused QKV projection [B, L, 3E]
    const src = x.toFloat32Array();
    const want = Array.from({ length: 2 * 3 * 4 }, (_, i) => src[Math.floor(i / 4) * 12 + 4 + (i % 4)]!); // the K part
    expectExact(
      await ctx.h.run("slice", attrs.slice(-1, 4, 4), [x], [2, 3, 4]),
      { shape: [2, 3, 4], data: want },
      "slice axis -1",
    );
    const view = x.permute([2, 1, 0]); // [12, 3, 2], strided
    const whole = permute64(x, [2, 1, 0]).data;
    expectExact(
      await ctx.h.run("slice", attrs.slice(1, 1, 2), [view], [12, 2, 2]),
      {
        shape: [12, 2, 2],
        data: Array.from({ length: 48 }, (_, i) => whole[Math.floor(i / 4) * 6 + 2 + (i % 4)]!),
      },
      "slice of a view",
    );
    // A negative start counts from the end (torch.narrow): the last position of [B, L, E], what an LM's head reads.
    expectExact(
      await ctx.h.run("slice", attrs.slice(1, -1, 1), [x], [2, 1, 12]),
      {
        shape: [2, 1, 12],
        data: Array.from({ length: 24 }, (_, i) => src[(Math.floor(i / 12) * 3 + 2) * 12 + (i % 12)]!),
      },
      "slice from the end",
    );
  });
}

/** Row-major values of x permuted (output dim i = input dim perm[i]), by explicit index arithmetic. */
function permute64(x: Tensor, perm: readonly number[]): { shape: number[]; data: number[] } {
  const src = x.toFloat32Array();
  const inShape = x.shape;
  const inStrides = inShape.map((_, i) => inShape.slice(i + 1).reduce((a, d) => a * d, 1));
  const shape = perm.map((p) => inShape[p]!);
  const data = new Array<number>(src.length);
  for (let o = 0; o < src.length; o++) {
    let rest = o;
    let at = 0;
    for (let d = shape.length - 1; d >= 0; d--) {
      at += (rest % shape[d]!) * inStrides[perm[d]!]!;
      rest = Math.floor(rest / shape[d]!);
    }
    data[o] = src[at]!;
  }
  return { shape, data };
}
