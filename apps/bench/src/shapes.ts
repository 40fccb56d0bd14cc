// The benchmark shapes: (b, T, d, heads) = batch, sequence length, model dim (d_in = d_out), query heads.

export interface BenchShape {
  readonly b: number;
  readonly t: number;
  readonly d: number;
  readonly h: number;
}

/** The default set: GPT-2-small-sized heads at three lengths, a small-model batch, and a tiny shape for checking. */
export const DEFAULT_SHAPES: readonly BenchShape[] = Object.freeze([
  { b: 2, t: 6, d: 8, h: 2 },
  { b: 4, t: 128, d: 256, h: 8 },
  { b: 1, t: 128, d: 768, h: 12 },
  { b: 1, t: 512, d: 768, h: 12 },
  { b: 1, t: 1024, d: 768, h: 12 },
]);

/** The default set of `--problem block`: a GPT-2-small block at two lengths. */
export const DEFAULT_BLOCK_SHAPES: readonly BenchShape[] = Object.freeze([
  { b: 1, t: 128, d: 768, h: 12 },
  { b: 1, t: 512, d: 768, h: 12 },
]);

/** The default of `--problem train-block`: the GPT-2-small block at T=512. */
export const DEFAULT_TRAIN_BLOCK_SHAPES: readonly BenchShape[] = Object.freeze([{ b: 1, t: 512, d: 768, h: 12 }]);

/**
 * The default set of `--problem decode`, where T is the cache length (one new token over T cached positions): the
 * issue's GPT-2-small heads over caches of 128, 512 and 1024, after a tiny shape for checking.
 */
export const DEFAULT_DECODE_SHAPES: readonly BenchShape[] = Object.freeze([
  { b: 2, t: 6, d: 8, h: 2 },
  { b: 1, t: 128, d: 768, h: 12 },
  { b: 1, t: 512, d: 768, h: 12 },
  { b: 1, t: 1024, d: 768, h: 12 },
]);

/** The default of `--problem flex`: GPT-2-small heads (d 768, 12 heads of 64) at T = 1024. */
export const DEFAULT_FLEX_SHAPES: readonly BenchShape[] = Object.freeze([{ b: 1, t: 1024, d: 768, h: 12 }]);

/** `--t T`: the flex problem's shape at sequence length T (b 1, d 768, 12 heads). Throws an Error naming the problem. */
export function flexShape(text: string): BenchShape {
  if (!/^[1-9][0-9]*$/.test(text)) throw new Error(`--t "${text}": expected a positive integer sequence length`);
  return { b: 1, t: Number(text), d: 768, h: 12 };
}

/** Parses "b,T,d,heads" (e.g. "1,128,768,12"). Throws an Error naming the problem. */
export function parseShape(text: string): BenchShape {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length !== 4 || parts.some((p) => !/^[1-9][0-9]*$/.test(p))) {
    throw new Error(`--shape "${text}": expected four positive integers b,T,d,heads (e.g. 1,128,768,12)`);
  }
  const [b, t, d, h] = parts.map(Number) as [number, number, number, number];
  if (d % h !== 0) throw new Error(`--shape "${text}": d (${d}) must be divisible by heads (${h})`);
  return { b, t, d, h };
}

/** "1×128×768, 12 heads" → the compact label "1,128,768,12" used in tables and on the command line. */
export function shapeLabel(s: BenchShape): string {
  return `${s.b},${s.t},${s.d},${s.h}`;
}
