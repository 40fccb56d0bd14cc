// Numpy-style broadcasting for the host folds: the result shape of two shapes, and an index map from the result's
// flat index to an operand's flat index.
import { OnnxImportError } from "./import-error.js";
import { formatShape, sizeOf, stridesOf } from "./host-tensor.js";

export function broadcastShape(a: readonly number[], b: readonly number[], subject: string): number[] {
  const rank = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1)
      throw new OnnxImportError(
        subject,
        "the inputs do not broadcast",
        "dims equal or 1",
        `${formatShape(a)} and ${formatShape(b)}`,
      );
    out.push(da === 1 ? db : da);
  }
  return out;
}

/** For each flat index of `out`, the flat index into a tensor of `shape` broadcast to it. */
export function broadcastIndex(shape: readonly number[], out: readonly number[]): Int32Array {
  const n = sizeOf(out);
  const idx = new Int32Array(n);
  const rank = out.length;
  const src = stridesOf(shape);
  const outStrides = stridesOf(out);
  for (let flat = 0; flat < n; flat++) {
    let rem = flat;
    let at = 0;
    for (let ax = 0; ax < rank; ax++) {
      const coord = Math.floor(rem / outStrides[ax]!);
      rem -= coord * outStrides[ax]!;
      const sa = ax - (rank - shape.length);
      if (sa >= 0 && shape[sa] !== 1) at += coord * src[sa]!;
    }
    idx[flat] = at;
  }
  return idx;
}
