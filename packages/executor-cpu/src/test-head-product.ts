// The obvious product that score (Q·Kᵀ) and weighted-sum (weights · V) are checked against: per batch and query head,
// with the key/value head shared by H / Hkv query heads indexed explicitly; written independently of the kernels.
import { expect } from "vitest";
import type { Tensor } from "@attngraph/tensor";

/**
 * out[b, h, l, n] = Σ_k x[b, h, l, k] · kv[b, h / (H / Hkv), k, n] in float64 (kv[b, ·, n, k] with `kvTransposed`,
 * as keys are read), row-major over [B, H, L, N].
 * @param x [B, H, L, K]
 * @param kv [B, Hkv, K, N], or [B, Hkv, N, K] with `kvTransposed`
 */
function naiveHeadProduct(x: Tensor, kv: Tensor, kvTransposed: boolean): number[] {
  const [B, H, L, K] = x.shape as [number, number, number, number];
  const Hkv = kv.shape[1]!;
  const N = kv.shape[kvTransposed ? 2 : 3]!;
  const out: number[] = [];
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let l = 0; l < L; l++)
        for (let n = 0; n < N; n++) {
          const g = Math.floor((h * Hkv) / H);
          let acc = 0;
          for (let k = 0; k < K; k++)
            acc += x.get(b, h, l, k) * (kvTransposed ? kv.get(b, g, n, k) : kv.get(b, g, k, n));
          out.push(acc);
        }
  return out;
}

/** A kernel's output `got` is the product: of shape [B, H, L, N], each element within 5 digits of the float64 one. */
export function expectHeadProduct(got: Tensor, x: Tensor, kv: Tensor, kvTransposed: boolean): void {
  expect(got.shape).toEqual([x.shape[0], x.shape[1], x.shape[2], kv.shape[kvTransposed ? 2 : 3]]);
  const want = naiveHeadProduct(x, kv, kvTransposed);
  got.toArray().forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 5));
}
