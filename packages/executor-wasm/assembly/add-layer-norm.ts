// add → layer-norm fused, a row at a time: each row's sums are written by `add` (one row of it) into the first half of
// its [sum | norm] output row, then normalised from there by the layer norm's row code (`layerNormRow`: two-pass
// float64 over those float32 sums) into the second half while the row is still in L1. No math of its own: both halves
// are the add's and the layer norm's bits. (The unfused layer norm reads a dense [rows, 1] sum with stride 0, where
// this passes 1; with one element per row both paths do the same operations.)
import { PairParams, addRows } from "./add";
import { layerNormRow } from "./layer-norm";
import { at } from "./strided";

/**
 * For r < rows: dst[r·2n + j] = a[r·ars + j·acs] + b[r·brs + j·bcs] (j < n), then dst[r·2n + n + j] = the layer norm
 * of those n sums (weight and bias [n] with element strides ws and bs, 0 when absent). The host merges the broadcast
 * into such blocks of rows as for `add`, keeping the normalised axis as the row.
 */
export function addLayerNorm(p: PairParams, w: usize, ws: i32, bias: usize, bs: i32, eps: f64): void {
  const a = p.a, ars = p.ars, acs = p.acs, b = p.b, brs = p.brs, bcs = p.bcs, dst = p.dst, rows = p.rows, n = p.n;
  const rowBytes = <usize>n << 3; // 2n float32
  let o = dst;
  for (let r: i32 = 0; r < rows; r++, o += rowBytes) {
    addRows(at(a, r * ars), ars, acs, at(b, r * brs), brs, bcs, o, 1, n);
    layerNormRow(o, 1, o + (<usize>n << 2), n, w, ws, bias, bs, eps);
  }
}
