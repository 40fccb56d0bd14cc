// What the kv-append tests of every executor build the same way: the call (as the runtime makes it), a cache of
// sentinels (so positions never written show), the expected concatenation, and the calls the shared checks refuse.
import type { KernelCall } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";

/** The value of every cache position a test never writes. */
export const KV_SENTINEL = 7.5;

/** A tensor of `shape` filled with KV_SENTINEL. */
export function sentinelTensor(shape: readonly number[]): Tensor {
  return new Tensor(new Float32Array(shape.reduce((p, d) => p * d, 1)).fill(KV_SENTINEL), shape);
}

/** A kv-append call writing x [B, H, L, D] at `past` into cache [B, H, M, D] (`past` as given: tests pass bad ones). */
export function kvAppendCall<V extends { readonly shape: readonly number[] }>(
  cache: V,
  x: V,
  past: unknown,
  node = "blocks.0.attn.keys.cache",
): KernelCall<V> & { readonly signal?: undefined } {
  const outShape = [
    cache.shape[0]!,
    cache.shape[1]!,
    (typeof past === "number" ? past : 0) + x.shape[2]!,
    cache.shape[3]!,
  ];
  return { kind: "kv-append", node, attrs: { past, length: "S" }, inputs: [cache, x], outShape };
}

/** Row-major values of the [B, H, L1 + L2 + pad, D] concatenation of a and b along dim 2, then `pad` sentinel rows. */
export function kvConcat(a: Tensor, b: Tensor, pad = 0): number[] {
  const [nb, nh, l1, nd] = a.shape as [number, number, number, number];
  const out: number[] = [];
  for (let i = 0; i < nb; i++)
    for (let h = 0; h < nh; h++) {
      for (let l = 0; l < l1; l++) for (let d = 0; d < nd; d++) out.push(a.get(i, h, l, d));
      for (let l = 0; l < b.shape[2]!; l++) for (let d = 0; d < nd; d++) out.push(b.get(i, h, l, d));
      for (let l = 0; l < pad * nd; l++) out.push(KV_SENTINEL);
    }
  return out;
}
