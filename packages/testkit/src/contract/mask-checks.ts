// The mask op against the float64 reference: causal with both alignments when L != S (including rows that see no
// key), sliding window, key padding, and all of them composed. Visible scores must pass through bit for bit and hidden
// ones must be exactly −∞, so the tolerance is zero. A padding flag that is neither 0 nor 1 must be an error.
// Legend: B batch, H heads, L query length, S key length.
import { expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { MaskAttrs } from "@attngraph/graph";
import { mask64 } from "../reference/ops64.js";
import { attrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectClose, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";

const B = 2;
const H = 3;

interface MaskCase {
  readonly label: string;
  readonly L: number;
  readonly S: number;
  readonly attrs: Partial<MaskAttrs>;
  /** [B, S] 0/1 padding flags, or none. */
  readonly pad?: readonly number[];
}

const cases: readonly MaskCase[] = [
  { label: "causal top-left, L < S", L: 4, S: 6, attrs: { causal: true } },
  { label: "causal top-left, L > S", L: 6, S: 4, attrs: { causal: true } },
  { label: "causal bottom-right, L < S", L: 4, S: 6, attrs: { causal: true, alignment: "bottom-right" } },
  {
    label: "causal bottom-right, L > S (first rows see nothing)",
    L: 6,
    S: 4,
    attrs: { causal: true, alignment: "bottom-right" },
  },
  { label: "window 2, L = S", L: 6, S: 6, attrs: { causal: true, window: 2 } },
  { label: "window 3 bottom-right, L < S", L: 3, S: 7, attrs: { causal: true, window: 3, alignment: "bottom-right" } },
  // The window of a late query starts past the last key: those rows see nothing (found by a property test: the CPU
  // kernel once wrote such a row's −∞ past its end into the next row).
  { label: "window 1 top-left, L > S (later rows see nothing)", L: 5, S: 2, attrs: { causal: true, window: 1 } },
  { label: "key padding only", L: 4, S: 5, attrs: {}, pad: [0, 0, 0, 1, 1, 1, 0, 1, 0, 1] },
  { label: "key padding, one batch fully padded", L: 3, S: 3, attrs: {}, pad: [1, 1, 1, 0, 1, 0] },
  {
    label: "causal + window + left padding (a row sees nothing)",
    L: 5,
    S: 5,
    attrs: { causal: true, window: 2 },
    pad: [1, 1, 0, 0, 0, 0, 0, 0, 0, 1],
  },
];

export function maskChecks(ctx: ContractContext): void {
  for (const c of cases) {
    it(`mask: ${c.label}`, async () => {
      const rng = createRng(c.L * 10 + c.S);
      const scores = randomTensor(rng, [B, H, c.L, c.S], (r) => 3 * r.normal());
      const pad = c.pad ? Tensor.from(c.pad, [B, c.S]) : undefined;
      const a = attrs.mask(c.attrs);
      const out = await ctx.h.run("mask", a, [scores, pad], [B, H, c.L, c.S]);
      const want = mask64(
        Float64Array.from(scores.toFloat32Array()),
        B,
        H,
        c.L,
        c.S,
        a,
        pad && Float64Array.from(pad.toFloat32Array()),
      );
      expectClose(out, { shape: scores.shape, data: want }, { abs: 0, rel: 0 }, `mask ${c.label}`);
    });
  }

  it("mask: a padding flag of 2 is an AttnGraphError, never a result", async () => {
    const scores = randomTensor(createRng(7), [B, H, 2, 3]);
    const pad = await ctx.h.upload(Tensor.from([0, 0, 2, 0, 1, 0], [B, 3]));
    const e = await thrown(async () =>
      ctx.h.dispatch("mask", attrs.mask(), [await ctx.h.upload(scores), pad], [B, H, 2, 3]),
    );
    expect(e, "the mask kernel returned instead of throwing").toBeDefined();
    expect(AttnGraphError.isInstance(e), `expected an AttnGraphError, got ${String(e)}`).toBe(true);
  });
}
