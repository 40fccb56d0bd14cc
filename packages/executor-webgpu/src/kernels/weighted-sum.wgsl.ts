// weighted-sum: attention weights · V per batch and head, on the tiled matmul; value heads are shared across query
// heads like keys in score.wgsl.ts (indexed, never repeated), and v is read through its strides. A weight of exactly 0
// (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row: the matmul's skip-zero variant.
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";
import { expectDim, expectHeadGroups, expectRank } from "@attngraph/graph";
import { headsMatmul } from "./heads-matmul.js";

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel: WebGpuKernel = async (call, gpu) => {
  const w = input(call, 0);
  const v = input(call, 1);
  expectRank(call, "weights", w, 4, "[B, H, L, S]");
  expectRank(call, "v", v, 4, "[B, Hkv, S, D]");
  const [nb, nh, nl, ns] = w.shape as [number, number, number, number];
  expectDim(call, "v", "batch B of values must match the weights", nb, v.shape[0]!, v);
  expectHeadGroups(call, "v", nh, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", ns, v.shape[2]!, v);
  return headsMatmul(gpu, "weighted-sum", w, v, [nb, nh, nl, v.shape[3]!], { skipZeroA: true });
};
