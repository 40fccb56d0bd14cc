// erf, erfc and the standard normal CDF in WGSL, which has no erf built-in; GELU's exact form is x · Φ(x). Absolute
// error below 1e-6 in float32 everywhere (src/erf.test.ts measures it on the device against a float64 erf):
// - |z| < 0.5: the Maclaurin series of erf to z¹³ (truncation < 1e-9 there), so erf and Φ − 1/2 keep their relative
//   accuracy near 0, where GELU's output is tiny.
// - |z| >= 0.5: erfc(|z|) from Numerical Recipes' Chebyshev fit `erfcc` (relative error < 1.2e-7 for every z >= 0), so
//   the lower tail Φ(x) = erfc(|z|)/2 for x < 0 is accurate relative to its own size, not only to 1: 1 + erf(z) would
//   lose it all to cancellation. (Abramowitz & Stegun 7.1.26 alone is accurate to 1.5e-7 only in absolute terms.)
// z is clamped to 14 before the exponential (e^-196 is 0 in float32, and z² cannot overflow), so no driver sees an
// exp(-inf), and Φ of a very negative x is exactly 0 (GELU gives −0 there, x · 0, not a product of two extremes).
// Only f32 arithmetic and exp: no constant expression may be an infinity in WGSL, and none is.

export const ERF_WGSL = /* wgsl */ `
// erf(z) for |z| < 0.5: z · Σ (−z²)ⁿ / (n! (2n + 1)) · 2/√π, Horner in z².
fn erf_series(z: f32) -> f32 {
  let z2 = z * z;
  let s = 1.0 + z2 * (-0.333333333333 + z2 * (0.1 + z2 * (-0.0238095238095 + z2 * (0.00462962962963 + z2 * (-0.000757575757576 + z2 * 0.000106837606838)))));
  return 1.12837916709551257 * z * s;
}
// erfc(z) for z >= 0 (Numerical Recipes erfcc): t · exp(−z² + P(t)), t = 1 / (1 + z/2).
fn erfc_nonneg(zIn: f32) -> f32 {
  let z = min(zIn, 14.0);
  let t = 1.0 / (1.0 + 0.5 * z);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(p - z * z);
}
fn erf(z: f32) -> f32 {
  let a = abs(z);
  if (a < 0.5) { return erf_series(z); }
  let r = 1.0 - erfc_nonneg(a);
  return select(r, -r, z < 0.0);
}
fn erfc(z: f32) -> f32 {
  if (abs(z) < 0.5) { return 1.0 - erf_series(z); }
  let c = erfc_nonneg(abs(z));
  return select(c, 2.0 - c, z < 0.0);
}
// Φ(x) = (1 + erf(x/√2)) / 2, with the lower tail as erfc(|z|)/2.
fn normal_cdf(x: f32) -> f32 {
  let z = x * 0.707106781186547524;
  if (abs(z) < 0.5) { return 0.5 + 0.5 * erf_series(z); }
  let c = 0.5 * erfc_nonneg(abs(z));
  return select(1.0 - c, c, z < 0.0);
}`;
