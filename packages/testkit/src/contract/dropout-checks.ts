// Dropout: identity in eval mode; in training mode the mask must be bit-identical to the counter-based reference
// (src/reference/dropout64.ts), with the counter being the element's row-major index in the tensor as seen, so the
// mask does not depend on how an executor lays the data out. Kept values are scaled by float32(1/(1−rate)) exactly.
import { expect, it } from "vitest";
import type { Tensor } from "@attngraph/tensor";
import { referenceDropout, referenceDropoutKeep } from "../reference/dropout64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectExact } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";

const SHAPE = [4, 8, 16];

/** Values in ±[0.5, 2.5): never 0, so a dropped element (0) cannot be mistaken for a kept one. */
const input = (seed: number): Tensor =>
  randomTensor(createRng(seed), SHAPE, (r) => (r.uniform() < 0.5 ? -1 : 1) * (0.5 + 2 * r.uniform()));

export function dropoutChecks(ctx: ContractContext): void {
  it("dropout: eval mode is the identity, whatever the rate", async () => {
    const x = input(500);
    const out = await ctx.h.run("dropout", attrs.dropout({ rate: 0.5, seed: 9, training: false }), [x], SHAPE);
    expectExact(out, { shape: SHAPE, data: x.toFloat32Array() }, "dropout in eval mode");
  });

  it("dropout: training at rate 0 keeps everything unscaled", async () => {
    const x = input(501);
    const out = await ctx.h.run("dropout", attrs.dropout({ rate: 0, seed: 9, training: true }), [x], SHAPE);
    expectExact(out, { shape: SHAPE, data: x.toFloat32Array() }, "dropout at rate 0");
  });

  for (const [seed, rate] of [
    [0, 0.5],
    [1, 0.1],
    [1234, 0.3],
    [0xdeadbeef, 0.9],
  ] as const) {
    it(`dropout: training mask and scaling are bit-identical to the reference (seed ${seed}, rate ${rate})`, async () => {
      const x = input(seed % 1000);
      const a = attrs.dropout({ rate, seed, training: true });
      const out = await ctx.h.run("dropout", a, [x], SHAPE);
      const got = out.toFloat32Array();
      const wrongMask = Array.from(got).findIndex((v, i) => (v !== 0) !== referenceDropoutKeep(seed, i, rate));
      expect(wrongMask, `first element whose keep/drop differs from the reference: ${wrongMask}`).toBe(-1);
      expectExact(
        out,
        { shape: SHAPE, data: referenceDropout(x.toFloat32Array(), seed, rate) },
        `dropout seed ${seed} rate ${rate}`,
      );
      const again = await ctx.h.run("dropout", a, [x], SHAPE);
      expectExact(again, { shape: SHAPE, data: got }, "the same seed twice");
    });
  }

  it("dropout: the counter is the row-major index of the tensor as seen, also for a strided view", async () => {
    const view = input(502).permute([0, 2, 1]); // [4, 16, 8], not contiguous
    const out = await ctx.h.run("dropout", attrs.dropout({ rate: 0.4, seed: 77, training: true }), [view], [4, 16, 8]);
    expectExact(
      out,
      { shape: [4, 16, 8], data: referenceDropout(view.toFloat32Array(), 77, 0.4) },
      "dropout of a view",
    );
  });
}
