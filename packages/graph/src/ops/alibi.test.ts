import { describe, expect, it } from "vitest";
import { alibiSlopes } from "./alibi.js";

describe("alibiSlopes", () => {
  it("powers of two, and the paper's interleaving for other head counts", () => {
    expect(alibiSlopes(8)).toEqual([1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
    expect(alibiSlopes(1)).toEqual([1 / 256]);
    // H = 6: n = 4 gives 2^-2, 2^-4, 2^-6, 2^-8; the rest are get_slopes(8)[0::2][:2] = 2^-1, 2^-3.
    expect(alibiSlopes(6)).toEqual([1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]);
    expect(alibiSlopes(3)).toEqual([1 / 16, 1 / 256, 1 / 4]);
    const twelve = alibiSlopes(12); // n = 8, then 2^(-(2k+1)/2)
    expect(twelve.slice(0, 8)).toEqual(alibiSlopes(8));
    [-0.5, -1.5, -2.5, -3.5].forEach((e, k) => expect(twelve[8 + k]).toBeCloseTo(2 ** e, 15));
  });
});
