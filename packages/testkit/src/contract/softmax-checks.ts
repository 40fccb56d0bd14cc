// Softmax against the float64 reference where naive kernels break: scores around ±1000 (exp overflow/underflow
// without the max subtracted), fully masked rows (0/0 → must be exactly 0), partly masked rows, and NaN (must
// propagate, never be silently dropped). Also proves that compare() itself counts NaN against a number as a mismatch,
// so none of these checks can pass on NaN.
// Legend: B batch, H heads, L query length, S key length.
import { expect, it } from "vitest";
import { compare, Tensor } from "@attngraph/tensor";
import { softmax64 } from "../reference/ops64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";

const SHAPE = [2, 2, 3, 5]; // [B, H, L, S]
const S = 5;

export function softmaxChecks(ctx: ContractContext): void {
  const check = async (x: Tensor, scale: number, label: string): Promise<Tensor> => {
    const out = await ctx.h.run("softmax", attrs.softmax(scale), [x], x.shape);
    expectClose(
      out,
      { shape: x.shape, data: softmax64(Float64Array.from(x.toFloat32Array()), x.shape.at(-1)!, scale) },
      OP_TOL,
      label,
    );
    return out;
  };
  const finite = (t: Tensor): boolean => t.toFloat32Array().every(Number.isFinite);

  it("softmax: random scores with a scale", async () => {
    await check(
      randomTensor(createRng(400), SHAPE, (r) => 2 * r.normal()),
      0.35,
      "softmax scale 0.35",
    );
  });

  it("softmax: scores around +1000 neither overflow nor give NaN", async () => {
    const rng = createRng(401);
    expect(
      finite(
        await check(
          randomTensor(rng, SHAPE, (r) => 1000 + 4 * r.normal()),
          1,
          "softmax of ~1000",
        ),
      ),
    ).toBe(true);
    // A power-of-two scale keeps scale·x exact in float32, so the reference and any kernel see the same logits.
    expect(
      finite(
        await check(
          randomTensor(rng, SHAPE, (r) => 2000 + 8 * r.normal()),
          0.5,
          "softmax of ~2000 at scale 0.5",
        ),
      ),
    ).toBe(true);
  });

  it("softmax: scores around -1000 and -1e30 do not underflow to 0/0", async () => {
    const rng = createRng(402);
    expect(
      finite(
        await check(
          randomTensor(rng, SHAPE, (r) => -1000 + 4 * r.normal()),
          1,
          "softmax of ~-1000",
        ),
      ),
    ).toBe(true);
    const mixed = Tensor.from([-1e30, 0, -1e30, 1, -3e38, -1e30, -1e30, -1e30, -1e30, -1e30], [2, S]);
    expect(finite(await check(mixed, 1, "softmax with -1e30 entries"))).toBe(true);
  });

  it("softmax: a fully masked row gives exact zeros, masked entries of other rows are exactly 0", async () => {
    const m = -Infinity;
    const x = Tensor.from([m, m, m, m, m, 0.5, m, 2, -1, m, 3, 1, 4, 1, 5], [3, S]);
    const out = await check(x, 0.7, "softmax with masked entries");
    const got = out.toFloat32Array();
    expect(Array.from(got.subarray(0, S)), "fully masked row").toEqual([0, 0, 0, 0, 0]);
    expect([got[6], got[9]], "masked entries of a partly masked row").toEqual([0, 0]);
  });

  it("softmax: a NaN input gives NaN in its row and leaves other rows alone", async () => {
    const x = Tensor.from([0.1, NaN, 0.3, 0.4, 0.5, 1, 2, 3, 4, 5], [2, S]);
    const out = await ctx.h.run("softmax", attrs.softmax(1), [x], [2, S]);
    const got = out.toFloat32Array();
    expect(
      Array.from(got.subarray(0, S)).every(Number.isNaN),
      `row with a NaN: got ${Array.from(got.subarray(0, S))}`,
    ).toBe(true);
    const second = softmax64(Float64Array.from([1, 2, 3, 4, 5]), S, 1);
    expect(compare(got.subarray(S), second, OP_TOL).ok, "row without a NaN").toBe(true);
    // The harness's comparison must not let such a row pass as a number.
    expect(
      compare(got.subarray(0, S), softmax64(Float64Array.from([0.1, 0.2, 0.3, 0.4, 0.5]), S, 1), OP_TOL).failures,
    ).toBe(S);
  });

  it("compare() counts NaN against a number as a mismatch, either way round", () => {
    expect(compare([NaN, 1], [0.5, 1]).ok).toBe(false);
    expect(compare([0.5, 1], [NaN, 1]).ok).toBe(false);
    expect(compare([NaN], [NaN]).ok).toBe(false);
    expect(compare([NaN], [NaN], undefined, { equalNan: true }).ok).toBe(true);
    expect(compare([Infinity], [3.4e38], { abs: 1e30, rel: 1 }).ok).toBe(false);
  });
}
