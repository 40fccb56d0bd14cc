// The layout rules behind Tensor.reshape and Tensor.view: which shape a -1 stands for, and when a strided view can be
// presented in a new shape without copying (the rule the executors' reshape kernels share, so all copy in the same cases).
import { ShapeError } from "./errors.js";
import { checkShape, contiguousStrides, formatShape, sizeOf, type Shape } from "./shape.js";

export function inferDim(shape: Shape, size: number): number[] {
  const free = shape.filter((d) => d === -1).length;
  if (free > 1) throw new ShapeError("reshape", "at most one dim may be -1", undefined, formatShape(shape));
  checkShape(
    "reshape",
    shape.map((d) => (d === -1 ? 0 : d)),
  );
  const known = shape.reduce((a, d) => (d === -1 ? a : a * d), 1);
  const out = shape.map((d) => (d === -1 ? (known === 0 ? 0 : size / known) : d));
  if (!out.every((d) => Number.isInteger(d)) || sizeOf(out) !== size) {
    const got = free
      ? `${formatShape(shape)} (no whole size for -1)`
      : `${formatShape(shape)} (${sizeOf(out)} elements)`;
    throw new ShapeError("reshape", "element count must stay the same", `${size} elements`, got);
  }
  return out;
}

/**
 * Strides that present (shape, strides) as `target` without copying, or undefined when impossible. Dims are grouped
 * into runs that are dense among themselves; each target dim must fall inside one run (the rule torch.view uses).
 */
export function viewStrides(shape: Shape, strides: readonly number[], target: Shape): number[] | undefined {
  if (sizeOf(target) === 0) return contiguousStrides(target);
  const src = shape.map((d, i) => [d, strides[i]!] as const).filter(([d]) => d !== 1);
  const out = new Array<number>(target.length);
  let si = src.length - 1;
  let ti = target.length - 1;
  while (ti >= 0) {
    // Collect one source run (dims that are dense relative to each other), from the innermost outwards.
    if (si < 0) {
      // Remaining target dims must all be 1.
      if (target[ti] !== 1) return undefined;
      out[ti--] = 1;
      continue;
    }
    let runSize = src[si]![0];
    const runStride = src[si]![1];
    let sj = si - 1;
    while (sj >= 0 && src[sj]![1] === src[sj + 1]![1] * src[sj + 1]![0]) {
      runSize *= src[sj]![0];
      sj--;
    }
    // Spread the run over target dims from the inside.
    let acc = 1;
    while (ti >= 0 && acc < runSize) {
      const d = target[ti]!;
      out[ti] = runStride * acc;
      acc *= d;
      ti--;
    }
    if (acc !== runSize) return undefined;
    while (ti >= 0 && target[ti] === 1 && sj < 0) out[ti--] = 1;
    si = sj;
  }
  return si < 0 ? out : undefined;
}
