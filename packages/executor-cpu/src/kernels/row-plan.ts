// The rows one part of a row-wise kernel reads: for each strided input, where its rows start and how it steps along
// them. Written once so that every elementwise and per-row Impl (norms, softmax, optimizers) walks its inputs the same
// way, and its hot loop only reads locals.
import { lastAxis, rowOffsets, type RowRange, type StridedView } from "./strided.js";

/** One entry per view, `T | undefined` where the view may be absent. */
type PerView<V, T> = { readonly [K in keyof V]: undefined extends V[K] ? T | undefined : T };

/**
 * A tuple, so that a kernel takes it apart on one line: `const [r0, n, [xRows, gRows], [xs, gs], [xd, gd]] = …`.
 * Per view, `starts` and `data` are undefined and `steps` 0 where the view is absent.
 */
export type RowPlan<V extends readonly (StridedView | undefined)[]> = readonly [
  /** The part's first row in the whole output: its row r is written at (r0 + r) · n. */
  r0: number,
  /** Elements per row: the first view's last axis (1 for rank 0). */
  n: number,
  /** Per view, the `data` index of each row's first element (rowOffsets). */
  starts: PerView<V, Float64Array>,
  /** Per view, the stride along its last axis. */
  steps: { readonly [K in keyof V]: number },
  /** Per view, its elements. */
  data: PerView<V, Float32Array>,
];

/**
 * Plans rows `part` (default: all rows of the first view) of views that share one shape. An absent view (an optional
 * input, or one not read this time) plans nothing and costs nothing.
 */
export function planRows<V extends readonly [StridedView, ...(StridedView | undefined)[]]>(
  part: RowRange | undefined,
  ...views: V
): RowPlan<V> {
  const r0 = part?.start ?? 0;
  const starts = views.map((v) => v && rowOffsets(v, r0, part?.end));
  const steps = views.map((v) => (v ? lastAxis(v).stride : 0));
  const data = views.map((v) => v?.data);
  return [r0, lastAxis(views[0]).length, starts, steps, data] as unknown as RowPlan<V>;
}
