// score: raw Q·Kᵀ per batch and head, before scale and mask (the `scores` tap point), on the tiled matmul. q and k are
// usually head views ([B, L, H, D] permuted to [B, H, L, D]) read through their strides; Kᵀ is k with its strides
// swapped; query head h reads key head ⌊h / (H / Hkv)⌋.
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";
import { headsMatmul } from "./heads-matmul.js";

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]. */
export const scoreKernel: WebGpuKernel = async (call, gpu) => {
  const q = input(call, 0);
  const k = input(call, 1);
  return headsMatmul(gpu, "score", q, k, call.outShape, { transposeB: true });
};
