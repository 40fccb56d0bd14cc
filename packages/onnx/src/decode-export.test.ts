// A decode graph exported with past/present caches (decode-caches.ts), run the way onnxruntime users decode: the
// prompt with an empty past, then one token at a time, each call's present fed back as the next call's past. Every
// call's output must match attngraph's own decoder (cpu executor) on the same calls, for every attention variant that
// decodes: multi-head, GQA, a sliding window (the decoder's ring drops old positions, the model keeps them all and its
// mask hides them), ALiBi, RoPE (its offset read from the past's length), the fused-QKV projection, and a whole
// pre-norm transformer block with RoPE.
import { describe, expect, it } from "vitest";
import { multiHeadAttention, type AttentionOptions } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { OpGraph } from "@attngraph/graph";
import { transformerBlock } from "@attngraph/nn";
import { compileDecoder } from "@attngraph/runtime";
import { compare, Tensor, type AnyTensor } from "@attngraph/tensor";
import { modelWeights } from "./decode-caches.js";
import { exportOnnx } from "./export.js";
import { decodeModel } from "./proto/proto.js";
import { randomTensor } from "./test-against-cpu.js";
import { runInOrt } from "./test-ort.js";

const B = 2;
const D_IN = 16;

const attention = (heads: { numHeads: number; numKvHeads?: number; window?: number }, options: AttentionOptions) =>
  multiHeadAttention(
    {
      dIn: D_IN,
      dOut: D_IN,
      causal: true,
      window: heads.window ?? null,
      numHeads: heads.numHeads,
      numKvHeads: heads.numKvHeads ?? heads.numHeads,
    },
    { ...options, decode: true },
  );

/** name, graph, whether it has a sliding window (its decoder then gets a cache small enough to ring), contrib mode. */
const variants: [string, OpGraph, boolean, ("auto" | "none")?][] = [
  ["multi-head", attention({ numHeads: 4 }, {}), false],
  ["GQA 4/2 with RoPE", attention({ numHeads: 4, numKvHeads: 2 }, { position: { kind: "rope" } }), false],
  ["window 3", attention({ numHeads: 2, window: 3 }, {}), true],
  ["ALiBi", attention({ numHeads: 4 }, { position: { kind: "alibi" } }), false],
  ["RoPE with a window 4", attention({ numHeads: 2, window: 4 }, { position: { kind: "rope" } }), true],
  ["fused QKV", attention({ numHeads: 2 }, { fusedQkv: true }), false],
  [
    "transformer block with RoPE",
    transformerBlock({ embedDim: D_IN, nHeads: 2, causal: true, position: { kind: "rope" } }, { decode: true }),
    false,
  ],
  [
    "transformer block, plain ops only (contrib none)",
    transformerBlock({ embedDim: D_IN, nHeads: 2, causal: true }, { decode: true }),
    false,
    "none",
  ],
];

describe("exported decode graph (past and present caches) in onnxruntime-node", () => {
  for (const [name, graph, windowed, contrib] of variants) {
    it(`${name}: a 3-token prompt, then 4 single tokens, each call's output equal to the decoder's`, async () => {
      const caches = graph.nodes.filter((n) => n.kind === "kv-append");
      const states = new Set(caches.map((n) => n.inputs["cache"]!));
      const weights: Record<string, AnyTensor> = {};
      graph.weights.forEach((w, i) => {
        if (!states.has(w.name)) weights[w.name] = randomTensor(w.shape as number[], 40 + i, 0.5);
      });
      const model = exportOnnx(graph, weights, { contrib: contrib ?? "auto" });
      // A window's decoder gets a cache of 5 positions, so its ring drops old ones during the 7 tokens (and RoPE's N runs
      // ahead of its P); the model keeps them all and must still agree.
      const decoder = await compileDecoder(graph, {
        executors: [createCpuExecutor()],
        weights,
        maxLength: windowed ? 5 : 16,
        batch: B,
      });
      try {
        const out = graph.outputs[0]!;
        // Each cache's past starts empty: [B, Hkv, 0, D] from its declaration [B, Hkv, M, D].
        let past: Record<string, AnyTensor> = Object.fromEntries(
          caches.map((n) => {
            const [, h, , d] = graph.shapeOf(n.inputs["cache"]!);
            return [n.inputs["cache"]!, Tensor.zeros([B, h as number, 0, d as number])];
          }),
        );
        let seen = 0;
        for (const [step, length] of [3, 1, 1, 1, 1].entries()) {
          const x = randomTensor([B, length, D_IN], 100 + step);
          const want = (await decoder.step({ x }))[out] as Tensor;
          const got = await runInOrt(model, { x, ...past }, [out, ...caches.map((n) => n.name)]);
          const r = compare(got[out] as Tensor, want, { abs: 2e-5, rel: 2e-4 });
          expect(
            r.ok,
            `call ${step}: ${r.failures} of ${want.size} differ, worst ${JSON.stringify(r.worst)} ${r.shapeMismatch ?? ""}`,
          ).toBe(true);
          seen += length;
          for (const n of caches) expect(got[n.name]!.shape[2]).toBe(seen);
          if (windowed && step === 4) expect(decoder.cached).toBeLessThan(seen); // the decoder's ring did drop positions
          past = Object.fromEntries(caches.map((n) => [n.inputs["cache"]!, got[n.name]!]));
        }
      } finally {
        await decoder.dispose();
      }
    });
  }

  it("declares each cache as a past input [B, Hkv, P, D] and its kv-append node as a present output [B, Hkv, S, D]", () => {
    const graph = multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, numKvHeads: 1, causal: true }, { decode: true });
    const weights = Object.fromEntries(
      graph.weights
        .filter((w) => !w.name.endsWith(".cache.state"))
        .map((w, i) => [w.name, randomTensor(w.shape as number[], i)]),
    );
    const onnx = decodeModel(exportOnnx(graph, weights))["graph"] as {
      input: { name: string; type: unknown }[];
      output: { name: string; type: unknown }[];
      initializer: { name: string }[];
    };
    const dims = (v: { type: unknown }) =>
      (v.type as { tensor_type: { shape: { dim: Record<string, unknown>[] } } }).tensor_type.shape.dim.map(
        (d) => d["dim_param"] ?? d["dim_value"],
      );
    expect(onnx.input.map((v) => [v.name, dims(v)])).toEqual([
      ["x", ["B", "T", 8]],
      ["k.cache.state", ["B", 1, "P", 4]],
      ["v.cache.state", ["B", 1, "P", 4]],
    ]);
    expect(onnx.output.map((v) => [v.name, dims(v)])).toEqual([
      ["output", ["B", "T", 8]],
      ["k.cache", ["B", 1, "S", 4]],
      ["v.cache", ["B", 1, "S", 4]],
    ]);
    expect(onnx.initializer.map((t) => t.name)).not.toContain("k.cache.state");
    expect(modelWeights(graph).map((w) => w.name)).toEqual(Object.keys(weights)); // what exportOnnx needs: no caches
  });
});
