// The product per batch and head that score (Q·Kᵀ) and weighted-sum (weights · V) are, on the tiled matmul: both
// operands are [B, H, rows, cols] views read through their strides, and the second one's heads are shared across the
// query heads (head h reads head ⌊h / (H / Hkv)⌋: indexed, never repeated).
import type { GpuTensor } from "../gpu-tensor.js";
import type { KernelContext } from "../kernel-context.js";
import { type MatmulVariant, type Operand, matmulProgram } from "./matmul.wgsl.js";

/** The operand of a [B, H, R, C] view; `transposed` reads it as [B, H, C, R] (its last two strides swapped). */
function headOperand(t: GpuTensor, transposed = false): Operand {
  const [s0, s1, s2, s3] = t.strides as [number, number, number, number];
  return { t, offset: t.offset, batch: [s0, s1], row: transposed ? s3 : s2, col: transposed ? s2 : s3 };
}

/**
 * a [B, H, M, K] times b [B, Hkv, K, N] (bᵀ with `transposeB`: b [B, Hkv, N, K]) into a new [B, H, M, N] (`shape`, the
 * call's outShape: checkCall held the shapes to the op's declaration).
 */
export async function headsMatmul(
  gpu: KernelContext,
  name: string,
  a: GpuTensor,
  b: GpuTensor,
  shape: readonly number[],
  options: { readonly transposeB?: boolean } & MatmulVariant = {},
): Promise<GpuTensor> {
  const { transposeB = false, ...variant } = options;
  const [nb, nh, nm, nn] = shape as readonly [number, number, number, number];
  const nkv = b.shape[1]!;
  const out = gpu.alloc(shape);
  const dims = { m: nm, n: nn, k: a.shape[3]!, batches: [nb, nh] as const, group: nkv === 0 ? 1 : nh / nkv };
  await gpu.run(matmulProgram(name, dims, headOperand(a), headOperand(b, transposeB), undefined, out, variant));
  return out;
}
