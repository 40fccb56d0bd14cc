// The fused attention kernel against the CPU executor's (itself checked against the unfused chain), on the cases the
// golden files do not reach: key blocks past the first 64, GQA, L != S with both alignments, windows, padding, strided
// (transposed) q/k/v, Dv != D, and rows that see no key.
import { afterAll, describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compare, Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";

const webgpu = createWebGpuExecutor();
const cpu = createCpuExecutor();
afterAll(() => webgpu.dispose());

interface Case {
  readonly label: string;
  readonly dims: readonly [B: number, H: number, Hkv: number, L: number, S: number, D: number, Dv: number];
  readonly attrs: Record<string, unknown>;
  readonly pad?: (b: number, j: number) => number;
  readonly strided?: boolean;
}

const base = { causal: false, window: null, alignment: "top-left", scale: 0.4 };
const cases: readonly Case[] = [
  { label: "no mask, S = 150 (three key blocks)", dims: [1, 2, 2, 3, 150, 8, 8], attrs: base },
  {
    label: "GQA H=4/Hkv=2, causal bottom-right, L < S, Dv != D",
    dims: [2, 4, 2, 5, 9, 6, 3],
    attrs: { ...base, causal: true, alignment: "bottom-right" },
  },
  {
    label: "causal top-left, L > S: rows past S see all keys",
    dims: [1, 2, 1, 9, 4, 4, 4],
    attrs: { ...base, causal: true },
  },
  {
    label: "causal bottom-right, L > S: first rows see nothing (zeros)",
    dims: [1, 1, 1, 7, 3, 4, 4],
    attrs: { ...base, causal: true, alignment: "bottom-right" },
  },
  { label: "window 3 over 100 keys", dims: [1, 2, 2, 100, 100, 4, 4], attrs: { ...base, causal: true, window: 3 } },
  {
    label: "key padding with one batch entry fully padded, strided q/k/v",
    dims: [2, 2, 2, 4, 6, 4, 4],
    attrs: base,
    pad: (b, j) => (b === 1 || j % 3 === 0 ? 1 : 0),
    strided: true,
  },
];

describe("fused attention kernel vs cpu", () => {
  for (const c of cases) {
    it(c.label, async () => {
      const [B, H, Hkv, L, S, D, Dv] = c.dims;
      const make = (shape: number[], seed: number): Tensor =>
        // Strided: made as [B, T, heads, d] and permuted to [B, heads, T, d], as the builders' head views are.
        c.strided
          ? randomTensor([shape[0]!, shape[2]!, shape[1]!, shape[3]!], seed).permute([0, 2, 1, 3])
          : randomTensor(shape, seed);
      const q = make([B, H, L, D], 1);
      const k = make([B, Hkv, S, D], 2);
      const v = make([B, Hkv, S, Dv], 3);
      const pad = c.pad
        ? Tensor.from(
            Array.from({ length: B * S }, (_, i) => c.pad!(Math.floor(i / S), i % S)),
            [B, S],
          )
        : undefined;
      const inputs = [q, k, v, pad];
      const values = await Promise.all(inputs.map((t) => (t ? webgpu.upload(t) : undefined)));
      const got = await webgpu.download(
        await webgpu.dispatch({
          kind: "attention",
          node: "attn",
          attrs: c.attrs,
          inputs: values,
          outShape: [B, H, L, Dv],
        }),
      );
      const want = cpu.dispatch({ kind: "attention", node: "attn", attrs: c.attrs, inputs, outShape: [B, H, L, Dv] });
      const r = compare(got, want, { abs: 1e-5, rel: 1e-4 });
      expect({ ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
      expect(got.toFloat32Array().every(Number.isFinite), "no NaN or infinity").toBe(true);
    });
  }

  it("a padding value of 2 is the mask's error, naming <node>.keyPaddingMask", async () => {
    const q = await webgpu.upload(randomTensor([1, 1, 2, 4], 5));
    const k = await webgpu.upload(randomTensor([1, 1, 3, 4], 6));
    const pad = await webgpu.upload(Tensor.from([0, 2, 0], [1, 3]));
    const e = await webgpu
      .dispatch({
        kind: "attention",
        node: "blocks.0.attn",
        attrs: base,
        inputs: [q, k, k, pad],
        outShape: [1, 1, 2, 4],
      })
      .catch((err: unknown) => err);
    expect(e).toMatchObject({
      code: "input",
      subject: "blocks.0.attn.keyPaddingMask",
      expected: "0 or 1",
      got: "2 at [0, 1]",
    });
  });
});
