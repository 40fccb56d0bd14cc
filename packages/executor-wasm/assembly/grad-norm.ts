// Global gradient-norm clipping (torch.nn.utils.clip_grad_norm_) and gradient accumulation over dense spans of float32, in float64 as the CPU
// executor does it, element by element in order (one accumulator), so both give the same sums:
// - sumSquares: Σ x² of n contiguous elements.
// - scaleBy: dst = x · coef, each product rounded once (dst may be x itself: each element is read before it is written).
// - accumulateScaled: dst = acc + scale · g (0 for acc on a restart), the sum of a parameter's microbatch gradients.

/** Σ x² of n contiguous elements from x, in float64. */
export function sumSquares(x: usize, n: i32): f64 {
  let sum: f64 = 0;
  for (let j: i32 = 0; j < n; j++) {
    const v = <f64>load<f32>(x + (<usize>j << 2));
    sum += v * v;
  }
  return sum;
}

/** n contiguous elements of x times coef → dst. */
export function scaleBy(x: usize, dst: usize, n: i32, coef: f64): void {
  for (let j: i32 = 0; j < n; j++) {
    const k = <usize>j << 2;
    store<f32>(dst + k, <f32>(<f64>load<f32>(x + k) * coef));
  }
}

/** Gradient accumulation: dst = (restart ? 0 : acc) + scale · g over n contiguous elements (acc not read with restart). */
export function accumulateScaled(acc: usize, g: usize, dst: usize, n: i32, scale: f64, restart: bool): void {
  for (let j: i32 = 0; j < n; j++) {
    const k = <usize>j << 2;
    const base: f64 = restart ? 0 : <f64>load<f32>(acc + k);
    store<f32>(dst + k, <f32>(base + scale * <f64>load<f32>(g + k)));
  }
}
