// Position encodings end to end: an attention graph with ALiBi or RoPE, built by @attngraph/attention, compiled by
// @attngraph/runtime and run on the cpu executor, against the float64 reference of @attngraph/testkit (written
// independently of the kernels). Lives in the CLI because it is the one package that depends on all of them.
// Legend: B batch, H heads, Hkv kv heads, L query length, S key length, D head dim, E = dOut = H·D.
import {
  attentionWeights,
  buildAttention,
  normalizeConfig,
  type AttentionConfigInput,
  type PositionEncoding,
} from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { compare, Tensor, type Tolerance } from "@attngraph/tensor";
import { referenceAttention } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";

/** A chain of float32 kernels against float64 (as the contract suite's whole-attention checks). */
const TOL: Tolerance = { abs: 1e-5, rel: 1e-4 };

interface Case {
  readonly label: string;
  readonly config: AttentionConfigInput;
  readonly position: PositionEncoding;
  readonly B: number;
  readonly L: number;
  /** [B, L] padding flags (1 = padded key); the graph then takes a keyPaddingMask input. */
  readonly pad?: readonly number[];
}

const cases: readonly Case[] = [
  {
    label: "ALiBi, the paper's slopes for H = 6, causal",
    config: { dIn: 8, dOut: 12, numHeads: 6, causal: true },
    position: { kind: "alibi" },
    B: 2,
    L: 5,
  },
  {
    label: "ALiBi, given slopes, GQA H=4/Hkv=2, scale 0.3, key padding, no mask otherwise",
    config: { dIn: 6, dOut: 16, numHeads: 4, numKvHeads: 2, scale: 0.3, qkvBias: true },
    position: { kind: "alibi", slopes: [0.9, 0.5, -0.2, 0.05] },
    B: 2,
    L: 4,
    pad: [0, 0, 0, 1, 1, 0, 0, 0],
  },
  {
    label: "RoPE over the whole head dim, causal",
    config: { dIn: 8, dOut: 16, numHeads: 2, causal: true },
    position: { kind: "rope" },
    B: 2,
    L: 6,
  },
  {
    label: "RoPE, rotaryDim 4 < D = 8, positionOffset 5, base 500, GQA H=4/Hkv=1",
    config: { dIn: 8, dOut: 32, numHeads: 4, numKvHeads: 1, causal: true, window: 3 },
    position: { kind: "rope", rotaryDim: 4, positionOffset: 5, base: 500 },
    B: 1,
    L: 7,
  },
];

/** Deterministic values of magnitude ~1, different for each seed. */
const seeded = (shape: number[], seed: number, scale = 1): Tensor =>
  Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => scale * Math.sin(seed * 97.3 + i * 1.7)),
    shape,
  );

function setup(c: Case) {
  const config = normalizeConfig(c.config);
  const { dIn, dOut: E } = config;
  const Ekv = config.numKvHeads * (E / config.numHeads);
  const init = (shape: number[], seed: number) => seeded(shape, seed, 1 / Math.sqrt(dIn));
  const raw: Record<string, Tensor> = {
    W_query: init([E, dIn], 1),
    W_key: init([Ekv, dIn], 2),
    W_value: init([Ekv, dIn], 3),
  };
  if (config.qkvBias) Object.assign(raw, { b_query: init([E], 4), b_key: init([Ekv], 5), b_value: init([Ekv], 6) });
  if (config.outProj) Object.assign(raw, { out_proj: init([E, E], 7), out_bias: init([E], 8) });
  const inputs: Record<string, Tensor> = { x: seeded([c.B, c.L, dIn], 9) };
  if (c.pad) inputs["keyPaddingMask"] = Tensor.from(c.pad, [c.B, c.L]);
  return { config, raw, inputs };
}

/** Runs the compiled graph, tapping the standard nodes; returns them with the output under "output". */
async function runGraph(c: Case, position: PositionEncoding | undefined): Promise<Record<string, Tensor>> {
  const { config, raw, inputs } = setup(c);
  const graph = buildAttention(config, { keyPaddingMask: c.pad !== undefined, ...(position ? { position } : {}) });
  const session = await compile(graph, { executors: [createCpuExecutor()], weights: attentionWeights(config, raw) });
  const got: Record<string, Tensor> = {};
  const sub = session.tap(["scores", "weights", "context"]).subscribe((e) => (got[e.node] = e.tensor));
  const { output } = await session.run(inputs);
  sub.unsubscribe();
  return { ...got, output: output! };
}

describe("position encodings end to end (builder → compile → cpu) against the float64 reference", () => {
  for (const c of cases) {
    it(c.label, async () => {
      const { config, raw, inputs } = setup(c);
      const want = referenceAttention(config, raw, inputs, c.position);
      const got = await runGraph(c, c.position);
      for (const name of ["scores", "weights", "context", "output"] as const) {
        const r = compare(got[name]!, want[name].data, TOL);
        expect(got[name]!.shape, name).toEqual(want[name].shape);
        expect(r.ok, `${name}: ${r.failures} elements off, worst ${JSON.stringify(r.worst)}`).toBe(true);
      }
      // The encoding changes the result: the same comparison without it must fail, or the check above proves nothing.
      const plain = referenceAttention(config, raw, inputs);
      expect(compare(got["output"]!, plain.output.data, TOL).ok, "output without the position encoding").toBe(false);
    });
  }

  it("RoPE: a position offset shifts queries and keys alike, so the weights do not change", async () => {
    const c = cases[2]!;
    const at0 = await runGraph(c, { kind: "rope" });
    const at9 = await runGraph(c, { kind: "rope", positionOffset: 9 });
    expect(compare(at9["weights"]!, at0["weights"]!.toFloat32Array(), TOL).ok).toBe(true);
    expect(compare(at9["scores"]!, at0["scores"]!.toFloat32Array(), TOL).ok).toBe(true);
  });

  it("ALiBi with zero slopes is plain attention (the scale is applied once, by the alibi node)", async () => {
    const c = cases[0]!;
    const zero = await runGraph(c, { kind: "alibi", slopes: [0, 0, 0, 0, 0, 0] });
    const plain = await runGraph(c, undefined);
    for (const name of ["weights", "output"])
      expect(compare(zero[name]!, plain[name]!.toFloat32Array(), TOL).ok, name).toBe(true);
  });
});
