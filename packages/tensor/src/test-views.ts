// What the tensor tests share: elements of a view by the definition, and 0, 1, 2, … as float32.
import type { Tensor } from "./tensor.js";

/** Row-major elements of a view by the definition: data[offset + Σ index·stride], one multi-index at a time. */
export function naive(t: Tensor): number[] {
  const out: number[] = [];
  const idx = new Array<number>(t.rank).fill(0);
  for (let n = 0; n < t.size; n++) {
    let p = t.offset;
    for (let d = 0; d < t.rank; d++) p += idx[d]! * t.strides[d]!;
    out.push(t.data[p]!);
    for (let d = t.rank - 1; d >= 0; d--) {
      if (++idx[d]! < t.shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

export const iota = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => i);
