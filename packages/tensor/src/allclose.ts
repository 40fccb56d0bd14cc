import { formatShape, sameShape } from "./shape.js";
import type { Tensor } from "./tensor.js";

export interface Tolerance {
  /** Absolute tolerance. */
  readonly abs: number;
  /** Relative tolerance, scaled by |expected|. */
  readonly rel: number;
}

export interface Mismatch {
  /** Row-major index of the worst element, -1 for a shape mismatch. */
  readonly index: number;
  readonly got: number;
  readonly expected: number;
  /** |got - expected|; Infinity when one side is NaN or infinite and the other is not. */
  readonly error: number;
}

export interface Comparison {
  readonly ok: boolean;
  /** Mismatched elements under the tolerance. */
  readonly failures: number;
  /**
   * The mismatched element with the largest absolute error (a NaN against a number, or a wrong infinity, counts as
   * the worst); with no mismatch, the element with the largest error. Undefined for no elements or a shape mismatch.
   */
  readonly worst: Mismatch | undefined;
  readonly shapeMismatch?: string;
}

/**
 * Compares elementwise with `|got - expected| <= abs + rel * |expected|` (the golden-case rule, and torch.allclose's
 * with roles named). NaN never matches a number; NaN matches NaN only with `equalNan`; equal infinities match.
 */
export function compare(
  got: Tensor | ArrayLike<number>,
  expected: Tensor | ArrayLike<number>,
  tol: Tolerance = { abs: 1e-5, rel: 1e-5 },
  options: { equalNan?: boolean } = {},
): Comparison {
  if (isTensor(got) && isTensor(expected) && !sameShape(got.shape, expected.shape)) {
    return {
      ok: false,
      failures: 1,
      worst: undefined,
      shapeMismatch: `shape ${formatShape(got.shape)} vs ${formatShape(expected.shape)}`,
    };
  }
  const a = isTensor(got) ? got.toFloat32Array() : got;
  const b = isTensor(expected) ? expected.toFloat32Array() : expected;
  if (a.length !== b.length) {
    return { ok: false, failures: 1, worst: undefined, shapeMismatch: `${a.length} elements vs ${b.length}` };
  }
  let failures = 0;
  let worst: Mismatch | undefined;
  let worstBad = false;
  for (let i = 0; i < a.length; i++) {
    const g = a[i]!;
    const e = b[i]!;
    let err: number;
    let bad: boolean;
    if (Number.isNaN(g) || Number.isNaN(e)) {
      bad = !(options.equalNan === true && Number.isNaN(g) && Number.isNaN(e));
      err = bad ? Infinity : 0;
    } else if (g === e) {
      bad = false;
      err = 0;
    } else if (!Number.isFinite(g) || !Number.isFinite(e)) {
      // An infinity matches only the same infinity: without this, Infinity <= abs + rel * Infinity would let 1 match
      // Infinity, and -Infinity match Infinity.
      bad = true;
      err = Infinity;
    } else {
      err = Math.abs(g - e);
      bad = !(err <= tol.abs + tol.rel * Math.abs(e));
    }
    if (bad) failures++;
    // The worst element is a failing one whenever there is any (the largest error among them, the first on a tie);
    // with no failure it is the element closest to failing in absolute terms.
    if (worst === undefined || (bad && !worstBad) || (bad === worstBad && err > worst.error)) {
      worst = { index: i, got: g, expected: e, error: err };
      worstBad = bad;
    }
  }
  return { ok: failures === 0, failures, worst };
}

/** True when every element is within tolerance (see `compare`). */
export function allclose(
  got: Tensor | ArrayLike<number>,
  expected: Tensor | ArrayLike<number>,
  tol?: Tolerance,
): boolean {
  return compare(got, expected, tol).ok;
}

function isTensor(v: unknown): v is Tensor {
  return typeof v === "object" && v !== null && "shape" in v && "strides" in v && "toFloat32Array" in v;
}
