// dropout with the project's counter-based generator (spec: packages/executor-cpu/README.md): element i (row-major
// index in the output, mod 2³²) is kept when fmix32(fmix32(seed) ^ i·0x9e3779b9) >= threshold. A copy, in u32, of
// @attngraph/graph's `dropoutBits` (AssemblyScript cannot import it); src/kernels/dropout.test.ts runs this one against
// that one, bit for bit, over seeds and counters across the uint32 range.
import { descDim, descRows, descStride, rowBase } from "./strided";

/** MurmurHash3's 32-bit finaliser. */
@inline export function fmix32(h: u32): u32 {
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

/** The bits of element i under an already mixed seed (fmix32(seed)). */
@inline export function mixedBits(mixedSeed: u32, i: u32): u32 {
  return fmix32(mixedSeed ^ (i * 0x9e3779b9));
}

/** Exported for tests: the bits of element i under `seed`. */
export function dropoutBits(seed: u32, i: u32): u32 {
  return mixedBits(fmix32(seed), i);
}

/** Training-mode dropout of any view → dst dense: kept → x · keptScale (one float32 multiply), dropped → 0. */
export function dropout(src: usize, desc: usize, dst: usize, mixedSeed: u32, threshold: u32, keptScale: f32): void {
  const rows = descRows(desc);
  const n = descDim(desc, 5);
  const step = <usize>(descStride(desc, 5) << 2);
  let i: u32 = 0;
  let o = dst;
  for (let r: i32 = 0; r < rows; r++) {
    let p = rowBase(desc, src, r);
    for (let j: i32 = 0; j < n; j++, p += step, o += 4, i++) {
      const x = load<f32>(p);
      store<f32>(o, mixedBits(mixedSeed, i) >= threshold ? x * keptScale : 0);
    }
  }
}
