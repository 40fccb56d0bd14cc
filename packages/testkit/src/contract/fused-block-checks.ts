// The fused block ops against the unfused pairs they replace, on the same executor, and against the float64
// reference: linear-gelu = gelu(projection) and add-layer-norm = [add | layer-norm(add)] on the last axis. The
// scheduler swaps one for the other whenever nothing watches the middle, so they must agree to float32 rounding.
import { it } from "vitest";
import type { Tensor } from "@attngraph/tensor";
import { add64, gelu64, layerNorm64 } from "../reference/block64.js";
import { linear64 } from "../reference/ops64.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL, runValues, stridedOn } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { f64 } from "./values.js";

export function fusedBlockChecks(ctx: ContractContext): void {
  for (const approximate of ["none", "tanh"] as const) {
    it(`linear-gelu (${approximate}): gelu(x · Wᵀ + b), with and without bias, on a strided x; equal to projection then gelu`, async () => {
      const rng = createRng(500);
      const x = randomTensor(rng, [2, 3, 6]);
      const strided = randomTensor(rng, [2, 6, 3]).permute([0, 2, 1]);
      const w = randomTensor(rng, [5, 6]);
      const b = randomTensor(rng, [5]);
      for (const [label, input] of [
        ["x", x],
        ["strided x", strided],
      ] as const) {
        for (const bias of [b, undefined]) {
          const fused = await ctx.h.run("linear-gelu", { approximate }, [input, w, bias], [2, 3, 5]);
          const want = gelu64(
            Float64Array.from(Float32Array.from(linear64(f64(input), 6, f64(w), 5, bias && f64(bias)))),
            approximate,
          );
          expectClose(
            fused,
            { shape: [2, 3, 5], data: want },
            OP_TOL,
            `linear-gelu of ${label}${bias ? " + bias" : ""}`,
          );
          const pre = await ctx.h.run("projection", {}, [input, w, bias], [2, 3, 5]);
          const pair = await ctx.h.run("gelu", { approximate }, [pre], [2, 3, 5]);
          expectClose(
            fused,
            { shape: pair.shape, data: pair.toFloat32Array() },
            { abs: 1e-6, rel: 1e-6 },
            `linear-gelu vs projection → gelu (${label})`,
          );
        }
      }
    });
  }

  it("add-layer-norm: [a + b | LayerNorm(a + b)] on the last axis, broadcasting, affine or not; equal to add then layer-norm", async () => {
    const rng = createRng(501);
    const E = 8;
    const cases: [string, Tensor, Tensor][] = [
      ["same shape", randomTensor(rng, [2, 3, E]), randomTensor(rng, [2, 3, E])],
      ["b broadcast over the batch", randomTensor(rng, [2, 3, E]), randomTensor(rng, [1, 3, E])],
      [
        "strided a",
        randomTensor(rng, [2, E, 3]).permute([0, 2, 1]),
        randomTensor(rng, [2, 3, E], (r) => 1e3 + r.normal()),
      ],
    ];
    const w = randomTensor(rng, [E]);
    const bias = randomTensor(rng, [E]);
    for (const [label, a, b] of cases) {
      for (const affine of [true, false]) {
        const fused = await ctx.h.run(
          "add-layer-norm",
          { eps: 1e-5 },
          [a, b, affine ? w : undefined, affine ? bias : undefined],
          [2, 3, 2 * E],
        );
        const sum = add64(f64(a), a.shape, f64(b), b.shape);
        const sum32 = Float64Array.from(Float32Array.from(sum.data));
        const norm = layerNorm64(sum32, E, 1e-5, affine ? f64(w) : undefined, affine ? f64(bias) : undefined);
        const want = new Float64Array(2 * 3 * 2 * E);
        for (let r = 0; r < 6; r++) {
          want.set(sum32.subarray(r * E, (r + 1) * E), r * 2 * E);
          want.set(norm.subarray(r * E, (r + 1) * E), r * 2 * E + E);
        }
        expectClose(
          fused,
          { shape: [2, 3, 2 * E], data: want },
          OP_TOL,
          `add-layer-norm ${label}${affine ? "" : " (no affine)"}`,
        );
        const s = await ctx.h.run("add", {}, [a, b], [2, 3, E]);
        const ln = await ctx.h.run(
          "layer-norm",
          { eps: 1e-5 },
          [s, affine ? w : undefined, affine ? bias : undefined],
          [2, 3, E],
        );
        const pair = new Float32Array(2 * 3 * 2 * E);
        for (let r = 0; r < 6; r++) {
          pair.set(s.toFloat32Array().subarray(r * E, (r + 1) * E), r * 2 * E);
          pair.set(ln.toFloat32Array().subarray(r * E, (r + 1) * E), r * 2 * E + E);
        }
        expectClose(
          fused,
          { shape: [2, 3, 2 * E], data: pair },
          { abs: 1e-6, rel: 1e-6 },
          `add-layer-norm vs add → layer-norm (${label})`,
        );
      }
    }
  });

  it("linear-gelu and add-layer-norm of strided values made on the executor (transpose views)", async () => {
    const rng = createRng(502);
    const h = ctx.h;
    const x = randomTensor(rng, [2, 3, 6]);
    const sx = await stridedOn(h, x, [1, 2, 0]);
    const w = randomTensor(rng, [5, 6]);
    const want = gelu64(Float64Array.from(Float32Array.from(linear64(f64(x), 6, f64(w), 5))), "none");
    expectClose(
      await runValues(h, "linear-gelu", { approximate: "none" }, [sx, await h.upload(w), undefined], [2, 3, 5]),
      { shape: [2, 3, 5], data: want },
      OP_TOL,
      "linear-gelu of a strided x",
    );
    const b = randomTensor(rng, [2, 3, 6]);
    const sum32 = Float64Array.from(Float32Array.from(add64(f64(x), [2, 3, 6], f64(b), [2, 3, 6]).data));
    const norm = layerNorm64(sum32, 6, 1e-5);
    const expected = new Float64Array(2 * 3 * 12);
    for (let r = 0; r < 6; r++) {
      expected.set(sum32.subarray(r * 6, (r + 1) * 6), r * 12);
      expected.set(norm.subarray(r * 6, (r + 1) * 6), r * 12 + 6);
    }
    expectClose(
      await runValues(h, "add-layer-norm", { eps: 1e-5 }, [sx, await h.upload(b), undefined, undefined], [2, 3, 12]),
      { shape: [2, 3, 12], data: expected },
      OP_TOL,
      "add-layer-norm of a strided a",
    );
  });
}
