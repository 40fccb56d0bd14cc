// Value → colour for the heatmaps. Pure, so the mapping is unit-tested; the canvas code lives in heatmap.ts.
// The ramp is viridis (perceptually even, readable in greyscale); masked cells get a flat light grey that no ramp
// colour comes near, so "masked" never reads as "small".

export type RGB = readonly [number, number, number];

/** Masked cells (and −∞ scores, which is how the mask node writes them). */
export const MASKED_RGB: RGB = [214, 214, 214];
/** NaN and +∞: should never appear; loud on purpose. */
export const INVALID_RGB: RGB = [255, 0, 255];

// Five stops of matplotlib's viridis.
const STOPS: readonly RGB[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

/** The ramp colour at t ∈ [0, 1] (clamped). */
export function rampColour(t: number): RGB {
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = STOPS[i]!;
  const b = STOPS[i + 1]!;
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}

export interface ColourRange {
  readonly min: number;
  readonly max: number;
}

/**
 * The colour of one cell: masked (or −∞) → MASKED_RGB, NaN/+∞ → INVALID_RGB, else the ramp at the value's place in
 * `range` (the middle of the ramp when the range is a single value).
 */
export function cellColour(value: number, range: ColourRange, masked = false): RGB {
  if (masked || value === -Infinity) return MASKED_RGB;
  if (!Number.isFinite(value)) return INVALID_RGB;
  const span = range.max - range.min;
  return rampColour(span > 0 ? (value - range.min) / span : 0.5);
}

export function cssColour([r, g, b]: RGB): string {
  return `rgb(${r}, ${g}, ${b})`;
}

/** Euclidean distance in RGB: tests use it to check that masked cells stay far from every ramp colour. */
export function colourDistance(a: RGB, b: RGB): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}
