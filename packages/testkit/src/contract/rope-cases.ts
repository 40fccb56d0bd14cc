// The rope geometries the contract runs rope on, forwards (position-checks.ts) and with `inverse` (rope-inverse-checks.ts):
// the whole head dim, a partial rotary dim with a position offset, and an odd head dim with another base.
// Legend: H heads, L length, D head dim.
import type { BoundRopeAttrs } from "./attrs.js";

export interface RopeCase {
  readonly label: string;
  readonly H: number;
  readonly L: number;
  readonly D: number;
  readonly attrs: Partial<BoundRopeAttrs>;
}

export const ROPE_CASES: readonly RopeCase[] = [
  { label: "whole head dim, base 10000", H: 3, L: 5, D: 8, attrs: {} },
  { label: "rotaryDim 4 < D = 10, positionOffset 7", H: 2, L: 4, D: 10, attrs: { rotaryDim: 4, positionOffset: 7 } },
  {
    label: "odd D = 7 with rotaryDim 6, base 500, positionOffset 1000",
    H: 2,
    L: 3,
    D: 7,
    attrs: { rotaryDim: 6, base: 500, positionOffset: 1000 },
  },
];
