// torch.nn.utils.clip_grad_norm_ in float64, written from its source (torch 1.13, norm_type 2): total_norm =
// ‖(‖g₁‖, ‖g₂‖, …)‖, clip_coef = max_norm / (total_norm + 1e-6), clip_coef_clamped = clamp(clip_coef, max=1), and
// every g multiplied by it. Independent of any executor's kernels.

/** Each gradient's squared norm, the total norm and the clamped coefficient. */
export function clipGradNorm64(
  grads: readonly ArrayLike<number>[],
  maxNorm: number,
  eps = 1e-6,
): { norm: number; coef: number; clipped: Float64Array[] } {
  const norms = grads.map((g) => Math.sqrt(Array.from(g).reduce((s, x) => s + x * x, 0)));
  const norm = Math.sqrt(norms.reduce((s, n) => s + n * n, 0));
  const coef = Math.min(1, maxNorm / (norm + eps));
  return { norm, coef, clipped: grads.map((g) => Float64Array.from(g, (x) => x * coef)) };
}
