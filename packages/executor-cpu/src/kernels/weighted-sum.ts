// weighted-sum: attention weights · V per batch and head. v is usually a transposed view ([B, S, Hkv, D] permuted to
// [B, Hkv, S, D]); the matmul core packs it into its reused scratch panels, no tensor copy.
import type { CpuKernel } from "../executor.js";
import { expectDim, expectHeadGroups, expectRank, outData, requireInput, result } from "./adapter.js";
import { matmul } from "./matmul.js";
import type { StridedView } from "./strided.js";

/**
 * context[b, h, l, d] = Σ_s weights[b, h, l, s] · v[b, h / (H / Hkv), s, d], float64 accumulation: one blocked matmul
 * per batch and head. Value heads are shared across query heads like keys in `scoreImpl` (indexed, never repeated).
 * Shapes are not checked here (the adapter does).
 * @param weights [B, H, L, S], any strides
 * @param v [B, Hkv, S, D], any strides; Hkv divides H
 * @param out where to write [B, H, L, D] row-major; default: a new array
 * @returns [B, H, L, D], row-major (`out` when given)
 */
export function weightedSumImpl(weights: StridedView, v: StridedView, out?: Float32Array): Float32Array {
  const [nb, nh, nl, ns] = weights.shape as readonly number[] as [number, number, number, number];
  const nhkv = v.shape[1]!;
  const nd = v.shape[3]!;
  const [ws0, ws1, ws2, ws3] = weights.strides as [number, number, number, number];
  const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
  const group = nhkv === 0 ? 1 : nh / nhkv; // query heads per value head
  const y = out ?? new Float32Array(nb * nh * nl * nd);
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      const vh = Math.floor(h / group);
      const wh = { data: weights.data, offset: weights.offset + b * ws0 + h * ws1, rowStride: ws2, colStride: ws3 }; // [L, S]
      const vv = { data: v.data, offset: v.offset + b * vs0 + vh * vs1, rowStride: vs2, colStride: vs3 }; // [S, D]
      matmul(nl, nd, ns, wh, vv, y, (b * nh + h) * nl * nd, nd);
    }
  }
  return y;
}

/** Inputs: weights [B, H, L, S], v [B, Hkv, S, D] → [B, H, L, D]. */
export const weightedSumKernel: CpuKernel = (call) => {
  const w = requireInput(call, 0, "weights");
  const v = requireInput(call, 1, "v");
  expectRank(call, "weights", w, 4, "[B, H, L, S]");
  expectRank(call, "v", v, 4, "[B, Hkv, S, D]");
  const [nb, nh, nl, ns] = w.shape as [number, number, number, number];
  expectDim(call, "v", "batch B of values must match the weights", nb, v.shape[0]!, v);
  expectHeadGroups(call, "v", nh, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", ns, v.shape[2]!, v);
  const shape = [nb, nh, nl, v.shape[3]!];
  return result(call, weightedSumImpl(w, v, outData(call, shape)), shape);
};
