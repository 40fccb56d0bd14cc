// score: raw Q·Kᵀ per batch and head, before scale and mask (the `scores` tap point), on the tiled matmul. q and k are
// usually head views ([B, L, H, D] permuted to [B, H, L, D]) read through their strides; Kᵀ is k with its strides
// swapped; query head h reads key head ⌊h / (H / Hkv)⌋.
import type { WebGpuKernel } from "../executor.js";
import { expectDim, expectHeadGroups, expectRank, requireInput } from "./checks.js";
import { matmulProgram } from "./matmul.wgsl.js";

/** Inputs: q [B, H, L, D], k [B, Hkv, S, D] → [B, H, L, S]. */
export const scoreKernel: WebGpuKernel = async (call, gpu) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  expectRank(call, "q", q, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  const [nb, nh, nl, nd] = q.shape as [number, number, number, number];
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, k.shape[1]!, k);
  expectDim(call, "k", "head dim D of keys must match the queries", nd, k.shape[3]!, k);
  const ns = k.shape[2]!;
  const out = gpu.alloc([nb, nh, nl, ns]);
  const [qs0, qs1, qs2, qs3] = q.strides as [number, number, number, number];
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  await gpu.run(
    matmulProgram(
      "score",
      { m: nl, n: ns, k: nd, batches: [nb, nh], group: k.shape[1] === 0 ? 1 : nh / k.shape[1]! },
      { t: q, offset: q.offset, batch: [qs0, qs1], row: qs2, col: qs3 },
      { t: k, offset: k.offset, batch: [ks0, ks1], row: ks3, col: ks2 },
      undefined,
      out,
    ),
  );
  return out;
};
