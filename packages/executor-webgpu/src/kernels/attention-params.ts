// The params the fused attention programs (attention, attention-lse, attention-grad) all start with, packed in one
// place so that each program's WGSL finds the pad, mask, scale, dropout and head-group words where the others do.
import type { DropoutAttrs, MaskGeometry } from "@attngraph/graph";
import type { GpuTensor } from "../gpu-tensor.js";
import { packDropout } from "./dropout.wgsl.js";
import { packMask } from "./mask.wgsl.js";
import type { Params } from "./shared.wgsl.js";

/** Where packAttention put each word. */
export interface AttentionWords {
  /** The views of q, k and the key padding mask. */
  readonly qv: number;
  readonly kv: number;
  readonly pv: number;
  readonly hasPad: number;
  /** The mask words (packMask). */
  readonly m: number;
  readonly sc: number;
  /** Whether dropout applies, then the dropout words (packDropout). */
  readonly dropping: number;
  readonly d: number;
  /** H / Hkv: the query heads that share one key head. */
  readonly group: number;
}

/**
 * Packs q's, k's and pad's views (q's when there is no pad, then never read), whether there is a pad, the mask words,
 * scale, whether dropout applies and its words, and the head group. attention-lse has no dropout (`undefined`): its
 * words are those of rate 0, never read.
 */
export function packAttention(
  p: Params,
  q: GpuTensor,
  k: GpuTensor,
  pad: GpuTensor | undefined,
  a: MaskGeometry & { readonly scale: number },
  dropout: DropoutAttrs | undefined,
): AttentionWords {
  const [, nh, nl] = q.shape as [number, number, number, number];
  const [, nkv, ns] = k.shape as [number, number, number, number];
  const qv = p.view(q);
  const kv = p.view(k);
  const pv = p.view(pad ?? q);
  const hasPad = p.u32(pad ? 1 : 0);
  const m = packMask(p, a, nl, ns);
  const sc = p.f32(a.scale);
  const dropping = p.u32(dropout?.training && dropout.rate > 0 ? 1 : 0);
  const d = packDropout(p, dropout ?? { rate: 0, seed: 0, training: false });
  const group = p.u32(nkv === 0 ? 1 : nh / nkv);
  return { qv, kv, pv, hasPad, m, sc, dropping, d, group };
}
