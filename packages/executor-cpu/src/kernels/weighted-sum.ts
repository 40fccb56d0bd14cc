// weighted-sum: attention weights · V per batch and head. v is usually a transposed view ([B, S, Hkv, D] permuted to
// [B, Hkv, S, D]); it is read through its strides, never copied.
import { Tensor } from "@attngraph/tensor";
import type { CpuKernel } from "../executor.js";
import { expectDim, expectHeadGroups, expectRank, requireInput } from "./adapter.js";
import type { StridedView } from "./strided.js";

/**
 * context[b, h, l, d] = Σ_s weights[b, h, l, s] · v[b, h / (H / Hkv), s, d], float64 accumulation.
 * Value heads are shared across query heads like keys in `scoreImpl` (indexed, never repeated).
 * Shapes are not checked here (the adapter does).
 * @param weights [B, H, L, S], any strides
 * @param v [B, Hkv, S, D], any strides; Hkv divides H
 * @returns [B, H, L, D], row-major
 */
export function weightedSumImpl(weights: StridedView, v: StridedView): Float32Array {
  const [nb, nh, nl, ns] = weights.shape as readonly number[] as [number, number, number, number];
  const nhkv = v.shape[1]!;
  const nd = v.shape[3]!;
  const [ws0, ws1, ws2, ws3] = weights.strides as [number, number, number, number];
  const [vs0, vs1, vs2, vs3] = v.strides as [number, number, number, number];
  const group = nhkv === 0 ? 1 : nh / nhkv; // query heads per value head
  const wd = weights.data;
  const vd = v.data;
  const out = new Float32Array(nb * nh * nl * nd);
  let o = 0;
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      const vh = Math.floor(h / group);
      const wBase = weights.offset + b * ws0 + h * ws1;
      const vBase = v.offset + b * vs0 + vh * vs1;
      for (let l = 0; l < nl; l++) {
        const wRow = wBase + l * ws2;
        for (let d = 0; d < nd; d++) {
          let acc = 0;
          for (let s = 0, wp = wRow, vp = vBase + d * vs3; s < ns; s++, wp += ws3, vp += vs2) acc += wd[wp]! * vd[vp]!;
          out[o++] = acc;
        }
      }
    }
  }
  return out;
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
  return new Tensor(weightedSumImpl(w, v), [nb, nh, nl, v.shape[3]!]);
};
