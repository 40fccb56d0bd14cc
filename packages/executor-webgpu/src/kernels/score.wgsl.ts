// score: raw Q·Kᵀ per batch and head, before scale and mask (the `scores` tap point), on the tiled matmul. q and k are
// usually head views ([B, L, H, D] permuted to [B, H, L, D]) read through their strides; Kᵀ is k with its strides
// swapped; query head h reads key head ⌊h / (H / Hkv)⌋.
import type { WebGpuKernel } from "../executor.js";
import { input } from "./inputs.js";
import { expectDim, expectHeadGroups, expectRank } from "@attngraph/graph";
import { headsMatmul } from "./heads-matmul.js";

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]. */
export const scoreKernel: WebGpuKernel = async (call, gpu) => {
  const q = input(call, 0);
  const k = input(call, 1);
  expectRank(call, "q", q, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  const [nb, nh, nl, nd] = q.shape as [number, number, number, number];
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, k.shape[1]!, k);
  expectDim(call, "k", "head dim D of keys must match the queries", nd, k.shape[3]!, k);
  return headsMatmul(gpu, "score", q, k, [nb, nh, nl, k.shape[2]!], { transposeB: true });
};
