// GELU and its derivative in float64 for the gelu and gelu-grad tests, independent of the kernels' own code: erfc by
// Simpson's rule on e^(−t²) (not the module's Chebyshev fit), the tanh form from Math.tanh and Math.exp.

/** erfc(a) for a ≥ 0: 2/√π ∫ₐ^{a+9} e^(−t²) dt by composite Simpson (the tail beyond a + 9 is below e^(−81)). */
export function erfc64(a: number): number {
  const n = 6000;
  const h = 9 / n;
  let s = Math.exp(-a * a) + Math.exp(-(a + 9) * (a + 9));
  for (let i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * Math.exp(-((a + i * h) ** 2));
  return ((s * h) / 3) * (2 / Math.sqrt(Math.PI));
}

/** GELU in float64; for x < 0, x/2 · erfc(|x|/√2) instead of x/2 · (1 + erf), which would cancel. */
export function gelu64(x: number, approximate: "none" | "tanh"): number {
  if (Number.isNaN(x) || x === -Infinity) return NaN; // x/2 · 0
  if (x === Infinity) return Infinity;
  if (approximate === "tanh") {
    const u = Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3);
    return x / (1 + Math.exp(-2 * u)); // = x/2 · (1 + tanh u), without cancelling
  }
  return x >= 0 ? (x / 2) * (2 - erfc64(x / Math.SQRT2)) : (x / 2) * erfc64(-x / Math.SQRT2);
}

/** gelu'(x) in float64. */
export function geluPrime64(x: number, approximate: "none" | "tanh"): number {
  if (!Number.isFinite(x)) return NaN; // ∞ · 0 in both formulas
  if (approximate === "tanh") {
    const k = Math.sqrt(2 / Math.PI);
    const t = Math.tanh(k * (x + 0.044715 * x ** 3));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
  }
  const cdf = x >= 0 ? 1 - erfc64(x / Math.SQRT2) / 2 : erfc64(-x / Math.SQRT2) / 2;
  return cdf + (x * Math.exp(-0.5 * x * x)) / Math.sqrt(2 * Math.PI);
}
