// Shared by the tests: seeded data and a compiled attention session on the webgpu executor.
import { multiHeadAttention, type AttentionConfigInput } from "@attngraph/attention";
import { compile, type Session } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import type { WebGpuExecutor } from "./executor.js";

/** A small deterministic generator (mulberry32), so a failure reproduces. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomTensor(shape: number[], seed: number, scale = 1): Tensor {
  const r = rng(seed);
  const n = shape.reduce((a, d) => a * d, 1);
  return Tensor.from(Array.from({ length: n }, () => scale * (2 * r() - 1)), shape);
}

/** A causal multi-head attention session (dIn = dOut = E) on `executor`, with seeded weights. */
export async function attentionSession(executor: WebGpuExecutor, config: AttentionConfigInput = { dIn: 8, dOut: 8, numHeads: 2, causal: true }): Promise<Session> {
  const graph = multiHeadAttention(config);
  const weights: Record<string, Tensor> = {};
  for (const [i, w] of graph.weights.entries()) weights[w.name] = randomTensor(w.shape.map((d) => (typeof d === "number" ? d : 1)), 100 + i, 0.5);
  return compile(graph, { executors: [executor], weights });
}
