// The examples of the root README.md, kept runnable: if one of these breaks, the README is wrong too.
import { attentionWeights, buildAttention, multiHeadAttention } from "@attngraph/attention";
import { createCpuExecutor, type CpuKernel } from "@attngraph/executor-cpu";
import { createOpRegistry, defineOp, insertAfter } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { rawAttentionWeights } from "./test-random.js";
import { compileDecoder } from "./decoder.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true };
const seeded = (shape: number[], seed: number) =>
  Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) => Math.sin(seed * 97 + i)),
    shape,
  );
const weights = attentionWeights(config, rawAttentionWeights(config, seeded));
const x = seeded([1, 4, 8], 6);

describe("README examples", () => {
  it("subscribing to weights", async () => {
    // README: subscribe
    const graph = multiHeadAttention(config);
    const session = await compile(graph, { executors: [createCpuExecutor()], weights });
    const seen: string[] = [];
    session.tap("weights").subscribe(({ runId, tensor }) => {
      seen.push(`run ${runId}: weights ${tensor.shape.join("x")}`); // [B, H, L, S]
    });
    const { output } = await session.run({ x });
    // README: end
    expect(seen).toEqual(["run 1: weights 1x2x4x4"]);
    expect(output!.shape).toEqual([1, 4, 8]);
  });

  it("composing a variant: score soft-capping as an op of your own", async () => {
    // README: softcap
    // 1. Declare the op once: inputs, attributes, shape rule.
    const softcap = defineOp<{ cap: number }>({
      kind: "softcap",
      doc: "tanh(s / cap) · cap, bounding attention scores (Gemma 2)",
      inputs: [{ name: "x", doc: "[B, H, L, S]" }],
      attrs: { cap: { type: "number", min: 0 } },
      inferShape: ([x]) => x!,
    });
    const registry = createOpRegistry([softcap]);

    // 2. A kernel for it on one executor.
    const softcapKernel: CpuKernel = ({ inputs, attrs }) => {
      const s = inputs[0]!.contiguous();
      const cap = attrs.cap as number;
      return new Tensor(
        s.data.map((v) => Math.tanh(v / cap) * cap),
        s.shape,
      );
    };
    const cpu = createCpuExecutor();
    cpu.registerKernel("softcap", softcapKernel);

    // 3. Put it between score and mask.
    const base = multiHeadAttention(config, { registry });
    const capped = insertAfter(base, "scores", (b, scores) =>
      b.add("softcap", "scores.capped", { x: scores }, { cap: 0.5 }),
    );

    const session = await compile(capped, { executors: [cpu], weights });
    const { output } = await session.run({ x });
    // README: end
    const plain = await (await compile(base, { executors: [createCpuExecutor()], weights })).run({ x });
    expect(capped.node("masked").inputs.scores).toBe("scores.capped");
    expect(output!.toArray()).not.toEqual(plain.output!.toArray());
    const scores = await new Promise<Tensor>((resolve) => {
      session.tap("scores.capped").subscribe((e) => resolve(e.tensor));
      void session.run({ x });
    });
    expect(Math.max(...scores.toArray().map(Math.abs))).toBeLessThanOrEqual(0.5);
  });

  it("generating one token at a time", async () => {
    const cpu = createCpuExecutor();
    const prompt = seeded([1, 3, 8], 7);
    const token = seeded([1, 1, 8], 8);
    // README: decode
    const decoder = await compileDecoder(buildAttention(config, { decode: true }), {
      executors: [cpu],
      weights,
      maxLength: 128,
    });
    const first = await decoder.step({ x: prompt }); // [1, T, dIn]: the prompt's outputs, its keys and values cached
    const next = await decoder.step({ x: token }); // [1, 1, dIn]: one more position, reading the T cached ones
    decoder.session.tap("k.cache"); // the cached keys [B, Hkv, P + T, D] on every step, like any node
    // README: end
    const full = await compile(buildAttention(config), { executors: [cpu], weights });
    const whole = (
      await full.run({ x: Tensor.from([...prompt.toArray(), ...token.toArray()].flat(2) as number[], [1, 4, 8]) })
    ).output!.toFloat32Array();
    const stepped = [...first.output!.toFloat32Array(), ...next.output!.toFloat32Array()];
    stepped.forEach((v, i) => expect(Math.abs(v - whole[i]!)).toBeLessThan(1e-5));
    expect(decoder.length).toBe(4);
  });

  it("choosing an executor", async () => {
    const graph = multiHeadAttention(config);
    // README: executors
    const cpu = createCpuExecutor();
    const session = await compile(graph, {
      executors: [cpu], // in order of preference (the README shows [webgpu, wasm, cpu])
      placement: { masked: "cpu" }, // pin one node to one executor
      weights,
    });
    const plan = session.explain(); // every node with its executor, layout and shape
    // README: end
    expect(plan).toContain("placement: masked → cpu (placed by the user)");
  });
});
