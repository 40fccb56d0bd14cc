import { ShapeError } from "./errors.js";

export type Shape = readonly number[];

/** Number of elements of a shape (1 for a scalar). */
export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major strides, in elements. */
export function contiguousStrides(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

export function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function formatShape(shape: Shape): string {
  return `[${shape.join(", ")}]`;
}

/** Throws unless every dim is a non-negative safe integer. */
export function checkShape(subject: string, shape: Shape): void {
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new ShapeError(subject, "invalid shape", "non-negative integer dims", formatShape(shape));
    }
  }
}
