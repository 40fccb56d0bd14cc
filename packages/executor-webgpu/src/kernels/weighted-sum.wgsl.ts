// weighted-sum: attention weights · V per batch and head, on the tiled matmul; value heads are shared across query
// heads like keys in score.wgsl.ts (indexed, never repeated), and v is read through its strides. A weight of exactly 0
// (a masked or dropped key) contributes nothing, not even a NaN or ±∞ of its value row: the matmul's skip-zero variant.
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";
import { headsMatmul } from "./heads-matmul.js";

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel: WebGpuKernel = async (call, gpu) => {
  const w = input(call, 0);
  const v = input(call, 1);
  return headsMatmul(gpu, "weighted-sum", w, v, call.outShape, { skipZeroA: true });
};
