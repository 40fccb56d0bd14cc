// Values laid out [B, H, ...] (heads on axis 1: queries' and keys' heads, scores, weights, the per-head context):
// the element ranges of one head, and edits of them.
import { ShapeError, Tensor, formatShape } from "@attngraph/tensor";

/** Checks `t` has heads on axis 1 and that every head index is one of them. */
export function checkHeads(node: string, t: Tensor, heads: readonly number[]): void {
  if (t.shape.length < 2) throw new ShapeError(node, "a per-head value has heads on axis 1", "[B, H, ...]", formatShape(t.shape));
  const h = t.shape[1]!;
  for (const x of heads) {
    if (!Number.isInteger(x) || x < 0 || x >= h) throw new ShapeError(`${node} head`, "a head index of this value", `an integer in [0, ${h})`, String(x));
  }
}

/** Calls `f(start, end)` for the element range of head `h` in each batch entry of a dense [B, H, ...] tensor. */
export function forHead(t: Tensor, h: number, f: (start: number, end: number, b: number) => void): void {
  const [nb, nh] = t.shape as [number, number];
  const per = nb * nh === 0 ? 0 : t.size / (nb * nh);
  for (let b = 0; b < nb; b++) f((b * nh + h) * per, (b * nh + h + 1) * per, b);
}

/** A dense float32 copy of `t` to edit. */
export function editable(t: Tensor): Float32Array {
  return t.toFloat32Array().slice();
}

export function withData(t: Tensor, data: Float32Array): Tensor {
  return new Tensor(data, t.shape);
}
