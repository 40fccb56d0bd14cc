// Shared by the tests: seeded data and a compiled attention session on the webgpu executor.
import { multiHeadAttention, type AttentionConfigInput } from "@attngraph/attention";
import { compile, type Session } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import type { WebGpuExecutor } from "./executor.js";

/** Seeded values uniform in [-scale, scale) (the testkit's mulberry32), so a failure reproduces. */
export function randomTensor(shape: number[], seed: number, scale = 1): Tensor {
  const r = mulberry32(seed);
  const n = shape.reduce((a, d) => a * d, 1);
  return Tensor.from(
    Array.from({ length: n }, () => scale * (2 * r() - 1)),
    shape,
  );
}

/** A causal multi-head attention session (dIn = dOut = E) on `executor`, with seeded weights. */
export async function attentionSession(
  executor: WebGpuExecutor,
  config: AttentionConfigInput = { dIn: 8, dOut: 8, numHeads: 2, causal: true },
): Promise<Session> {
  const graph = multiHeadAttention(config);
  const weights: Record<string, Tensor> = {};
  for (const [i, w] of graph.weights.entries())
    weights[w.name] = randomTensor(
      w.shape.map((d) => (typeof d === "number" ? d : 1)),
      100 + i,
      0.5,
    );
  return compile(graph, { executors: [executor], weights });
}
