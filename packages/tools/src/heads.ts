// Values with attention heads on one axis (`axis`, read from the graph: headsAxis): the element ranges of one head,
// and edits of them. Batch is axis 0.
import { ShapeError, Tensor, formatShape, sameShape } from "@attngraph/tensor";

/** Checks that `node` has one shape in the clean run and the corrupted one (patching and attribution compare them). */
export function checkRunShapes(node: string, clean: Tensor, corrupted: Tensor): void {
  if (!sameShape(clean.shape, corrupted.shape))
    throw new ShapeError(
      node,
      "the clean and corrupted runs give this node different shapes",
      formatShape(clean.shape),
      formatShape(corrupted.shape),
    );
}

/** Checks `t` has an axis `axis` (its heads) and that every head index is one of them. */
export function checkHeads(node: string, t: Tensor, heads: readonly number[], axis: number): void {
  if (t.shape.length <= axis)
    throw new ShapeError(node, `a per-head value has heads on axis ${axis}`, `rank > ${axis}`, formatShape(t.shape));
  const h = t.shape[axis]!;
  for (const x of heads) {
    if (!Number.isInteger(x) || x < 0 || x >= h)
      throw new ShapeError(`${node} head`, "a head index of this value", `an integer in [0, ${h})`, String(x));
  }
}

/**
 * Calls `f(start, end, b, k)` for each contiguous element range of head `h` in a dense tensor with heads on `axis`
 * (>= 1): `b` is the batch entry, `k` the range's offset within that entry's block of head h (the same k in every
 * batch entry means the same position).
 */
export function forHead(
  t: Tensor,
  axis: number,
  h: number,
  f: (start: number, end: number, b: number, k: number) => void,
): void {
  const shape = t.shape;
  const nh = shape[axis]!;
  const inner = shape.slice(axis + 1).reduce((a, d) => a * d, 1);
  const perBatch = shape.slice(1, axis).reduce((a, d) => a * d, 1); // outer positions within one batch entry
  const nb = shape[0]!;
  for (let b = 0; b < nb; b++) {
    for (let o = 0; o < perBatch; o++) {
      const start = ((b * perBatch + o) * nh + h) * inner;
      f(start, start + inner, b, o * inner);
    }
  }
}

/** A dense float32 copy of `t` to edit. */
export function editable(t: Tensor): Float32Array {
  return t.toFloat32Array().slice();
}

export function withData(t: Tensor, data: Float32Array): Tensor {
  return new Tensor(data, t.shape);
}
