// Reference of the dropout op's counter-based generator, written independently of any executor. The mask is a pure
// function of (seed, element index), so every executor, on any hardware and in any order, must drop the same
// elements: this file is what "the same" means.

/** MurmurHash3's 32-bit finalizer: every input bit flips about half of the output bits. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 32 random bits for element `i` (row-major index) under `seed`; 0x9e3779b9 (golden ratio) spreads the counter. */
export function referenceDropoutBits(seed: number, i: number): number {
  return fmix32((fmix32(seed) ^ Math.imul(i, 0x9e3779b9)) >>> 0);
}

/** Whether element `i` is kept at this rate: bits >= min(floor(rate·2³²), 2³²−1). */
export function referenceDropoutKeep(seed: number, i: number, rate: number): boolean {
  const threshold = Math.min(Math.floor(rate * 2 ** 32), 2 ** 32 - 1);
  return referenceDropoutBits(seed, i) >= threshold;
}

/**
 * Dropout in training mode over row-major values: kept x becomes float32(x · float32(1/(1−rate))), dropped becomes
 * 0. Both factors are float32, so the double product is exact and one rounding gives what a float32 multiply gives.
 */
export function referenceDropout(values: ArrayLike<number>, seed: number, rate: number): Float32Array {
  const scale = Math.fround(1 / (1 - rate));
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++)
    out[i] = referenceDropoutKeep(seed, i, rate) ? Math.fround(values[i]!) * scale : 0;
  return out;
}
