// Global gradient-norm clipping (torch.nn.utils.clip_grad_norm_) over dense spans of float32, in float64 as the CPU
// executor does it, element by element in order (one accumulator), so both give the same sums:
// - sumSquares: Σ x² of n contiguous elements.
// - scaleBy: dst = x · coef, each product rounded once (dst may be x itself: each element is read before it is written).

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
