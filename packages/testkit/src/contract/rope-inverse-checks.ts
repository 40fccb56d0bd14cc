// rope with `inverse: true` against the float64 reference on each of ROPE_CASES (part of backward-row-checks.ts), and
// inverse(rope(x)) = x both ways round on the executor.
import { it } from "vitest";
import { rope64 } from "../reference/rope64.js";
import { attrs } from "./attrs.js";
import { expectClose, OP_TOL, runValues } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { ROPE_CASES } from "./rope-cases.js";
import type { ContractContext } from "./context.js";
import { f64, hostStrided, onExecutor } from "./values.js";

export function ropeInverseChecks(ctx: ContractContext): void {
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
