// The position-encoding ops against the float64 reference, on strided inputs (the last axis strided, a non-zero offset). ALiBi: explicit and default slopes (a head count that is not a power of two), both
// alignments with L != S, −∞ entries that must stay −∞, and slopes of the wrong length, which must be an error, never a
// result. RoPE: whole and partial rotary dims, a position offset, and another base.
// Legend: B batch, H heads, L query length, S key length, D head dim.
import { expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { AlibiAttrs } from "@attngraph/graph";
import { alibi64 } from "../reference/alibi64.js";
import { rope64 } from "../reference/rope64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, OP_TOL, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";
import { ROPE_CASES } from "./rope-cases.js";
import { f64 } from "./values.js";

const B = 2;

/**
 * A random [B, H, L, n] view of a permuted [n, B, L, H] buffer that starts 5 elements in: the last axis is strided and
 * the offset is not 0. (A `q.heads` view [0, 2, 1, 3] keeps the last axis dense, and would let a kernel that ignores
 * the last stride pass.)
 */
function stridedView(seed: number, H: number, L: number, n: number, scale = 1): Tensor {
  const dense = randomTensor(createRng(seed), [n, B, L, H], (r) => scale * r.normal());
  const data = new Float32Array(5 + dense.size);
  data.set(dense.toFloat32Array(), 5);
  return new Tensor(data, dense.shape, dense.strides, 5).permute([1, 3, 2, 0]);
}

interface AlibiCase {
  readonly label: string;
  readonly H: number;
  readonly L: number;
  readonly S: number;
  readonly attrs: Partial<AlibiAttrs>;
}

const alibiCases: readonly AlibiCase[] = [
  {
    label: "explicit slopes, scale 1/sqrt(8), L = S",
    H: 2,
    L: 5,
    S: 5,
    attrs: { slopes: [0.75, -0.1], scale: 1 / Math.sqrt(8) },
  },
  { label: "the paper's slopes for H = 6, L < S top-left", H: 6, L: 3, S: 7, attrs: { scale: 0.5 } },
  {
    label: "the paper's slopes for H = 4, L < S bottom-right",
    H: 4,
    L: 3,
    S: 7,
    attrs: { scale: 0.3, alignment: "bottom-right" },
  },
  {
    label: "L > S bottom-right",
    H: 3,
    L: 6,
    S: 4,
    attrs: { slopes: [1, 0.5, 0.25], scale: 2, alignment: "bottom-right" },
  },
];

export function positionChecks(ctx: ContractContext): void {
  /** `kind` on x, a strided [B, H, L, n] view, against `reference` of x's values. */
  const expectOnStrided = async (
    kind: string,
    a: object,
    x: Tensor,
    reference: (x: Float64Array) => Float64Array,
    label: string,
  ): Promise<void> => {
    const out = await ctx.h.run(kind, a, [x], x.shape);
    expectClose(out, { shape: x.shape, data: reference(f64(x)) }, OP_TOL, label);
  };

  alibiCases.forEach((c, n) => {
    it(`alibi: ${c.label}, strided scores`, async () => {
      const scores = stridedView(700 + n, c.H, c.L, c.S, 3);
      const a = attrs.alibi(c.attrs);
      await expectOnStrided("alibi", a, scores, (s) => alibi64(s, B, c.H, c.L, c.S, a), `alibi ${c.label}`);
    });
  });

  it("alibi: −∞ entries (masked scores) stay −∞, the others get their bias", async () => {
    const H = 3;
    const L = 4;
    const S = 4;
    const scores = randomTensor(createRng(710), [B, H, L, S], (r, i) => (i % 3 === 0 ? -Infinity : r.normal()));
    const a = attrs.alibi({ scale: 0.5, alignment: "bottom-right" });
    const out = await ctx.h.run("alibi", a, [scores], [B, H, L, S]);
    expectClose(out, { shape: [B, H, L, S], data: alibi64(f64(scores), B, H, L, S, a) }, OP_TOL, "alibi with −∞");
    const got = out.toFloat32Array();
    expect(
      got.every((v, i) => (i % 3 === 0) === (v === -Infinity)),
      "exactly the −∞ inputs are −∞",
    ).toBe(true);
    // Whatever the scale: 0 · −∞ would be NaN.
    const zero = await ctx.h.run("alibi", attrs.alibi({ scale: 0 }), [scores], [B, H, L, S]);
    expect(
      zero.toFloat32Array().every((v, i) => (i % 3 === 0 ? v === -Infinity : Number.isFinite(v))),
      "−∞ with scale 0",
    ).toBe(true);
  });

  it("alibi: slopes whose length is not H are an AttnGraphError, never a result", async () => {
    const scores = await ctx.h.upload(randomTensor(createRng(711), [B, 3, 2, 2]));
    const e = await thrown(() =>
      ctx.h.dispatch("alibi", attrs.alibi({ slopes: [0.5, 0.25] }), [scores], [B, 3, 2, 2], "scores.alibi"),
    );
    expect(e, "the alibi kernel returned instead of throwing").toBeDefined();
    expect(AttnGraphError.isInstance(e), `expected an AttnGraphError, got ${String(e)}`).toBe(true);
    expect((e as AttnGraphError).message).toContain("scores.alibi");
  });

  ROPE_CASES.forEach((c, n) => {
    it(`rope: ${c.label}, strided input`, async () => {
      const x = stridedView(720 + n, c.H, c.L, c.D);
      const a = attrs.rope(c.attrs);
      await expectOnStrided("rope", a, x, (v) => rope64(v, B, c.H, c.L, c.D, a), `rope ${c.label}`);
    });
  });
}
