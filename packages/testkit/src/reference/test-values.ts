// Values and comparisons the reference tests share: seeded normals and an elementwise closeness check that names the
// worst element.
import { expect } from "vitest";
import { mulberry32 } from "../prng.js";

/** Seeded standard normals (Box–Muller on mulberry32). */
export function normals(seed: number, n: number, scale = 1): Float64Array {
  const u = mulberry32(seed);
  return Float64Array.from(
    { length: n },
    () => scale * Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()),
  );
}

/** Asserts |got − want| <= tol · (1 + |want|) elementwise, naming the worst element. */
export function expectNear(got: ArrayLike<number>, want: ArrayLike<number>, tol: number, label: string): void {
  expect(got.length, `${label}: length`).toBe(want.length);
  let worst = -1;
  let worstErr = 0;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i]! - want[i]!) / (1 + Math.abs(want[i]!));
    if (!(err <= worstErr)) {
      worstErr = err;
      worst = i;
    }
  }
  expect(
    worstErr <= tol,
    `${label}: worst at ${worst}: got ${got[worst]}, expected ${want[worst]} (scaled error ${worstErr})`,
  ).toBe(true);
}
