// One value against the reference's: the elementwise tolerance test (the tensor package's compare, NaN agreeing with
// NaN) plus the two summaries a diff table prints, the largest absolute and relative differences.
import { compare, type Tensor, type Tolerance } from "@attngraph/tensor";
import type { NodeComparison } from "./diff-types.js";

/** A compared node's numbers, as NodeComparison carries them; only the two compared statuses. */
export type ValueComparison = Pick<NodeComparison, "maxAbs" | "maxRel" | "failures" | "size" | "worst" | "reason"> & {
  readonly status: "agree" | "disagree";
};

export function compareValues(got: Tensor, ref: Tensor, tolerance: Tolerance): ValueComparison {
  const r = compare(got, ref, tolerance, { equalNan: true });
  if (r.shapeMismatch !== undefined) {
    return {
      status: "disagree",
      maxAbs: NaN,
      maxRel: NaN,
      failures: ref.size,
      size: ref.size,
      reason: `shape differs: ${r.shapeMismatch}`,
    };
  }
  const a = got.toFloat32Array();
  const b = ref.toFloat32Array();
  let maxAbs = 0;
  let maxRel = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y || (Number.isNaN(x) && Number.isNaN(y))) continue;
    const d = Math.abs(x - y); // NaN against a number, or two different infinities: Infinity below
    const err = Number.isFinite(d) ? d : Infinity;
    if (err > maxAbs) maxAbs = err;
    // Near zero a relative difference says nothing (the abs term of the tolerance judges those elements).
    const scale = Math.abs(y);
    if (scale >= tolerance.abs && scale > 0) {
      const rel = Number.isFinite(scale) ? err / scale : Infinity;
      if (rel > maxRel) maxRel = rel;
    }
  }
  return {
    status: r.ok ? "agree" : "disagree",
    maxAbs,
    maxRel,
    failures: r.failures,
    size: ref.size,
    ...(r.worst && !r.ok ? { worst: r.worst } : {}),
  };
}
