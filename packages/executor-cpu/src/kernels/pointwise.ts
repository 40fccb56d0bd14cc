// pointwise: any elementwise expression (@attngraph/graph's expression form, reads with no index), compiled once per
// expression to a JavaScript function of the elements and run over every element of inputs of one shape, any strides.
// silu, its gradient and every other op declared by an expression run here: no kernel per op.
import {
  afterwards,
  compilePointwise,
  elementsRead,
  overRows,
  pointwiseCallExpr,
  POINTWISE_SLOTS,
} from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { optionalInput, outData, requireInput, result } from "./adapter.js";
import { lastAxis, rowCount, rowOffsets } from "./strided.js";

/** Inputs: x0 [...], x1…x3 [...] (optional, x0's shape) → x0's shape. */
export const pointwiseKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const inputs = POINTWISE_SLOTS.map((name, i) =>
    i === 0 ? requireInput(call, 0, name) : optionalInput(call, i, name),
  );
  const expr = pointwiseCallExpr(call, inputs);
  const read = elementsRead(expr);
  const fn = compilePointwise(expr, POINTWISE_SLOTS);
  const x0 = inputs[0]!;
  const { length: n } = lastAxis(x0);
  const rows = rowCount(x0.shape);
  const y = outData(call, x0.shape) ?? new Float32Array(rows * n);
  // Only the inputs the expression reads are walked; the others are passed as 0. An element is read before `out`
  // (which may be x0's memory) is written.
  const used = inputs.map((t, i) => (t !== undefined && read.includes(POINTWISE_SLOTS[i]!) ? t : undefined));
  const pending = overRows(call, chunkWork, rows, n * (4 + 2 * read.length), (start, end) => {
    const offs = used.map((t) => (t === undefined ? undefined : rowOffsets(t, start, end)));
    const [s0 = 0, s1 = 0, s2 = 0, s3 = 0] = used.map((t) => (t === undefined ? 0 : lastAxis(t).stride));
    const [d0, d1, d2, d3] = used.map((t) => t?.data);
    for (let r = 0; r < end - start; r++) {
      const o = (start + r) * n;
      let p0 = offs[0]?.[r] ?? 0;
      let p1 = offs[1]?.[r] ?? 0;
      let p2 = offs[2]?.[r] ?? 0;
      let p3 = offs[3]?.[r] ?? 0;
      for (let j = 0; j < n; j++, p0 += s0, p1 += s1, p2 += s2, p3 += s3) {
        y[o + j] = fn(d0 ? d0[p0]! : 0, d1 ? d1[p1]! : 0, d2 ? d2[p2]! : 0, d3 ? d3[p3]! : 0);
      }
    }
  });
  return afterwards(pending, () => result(call, y, x0.shape));
});
