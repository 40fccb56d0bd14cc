// Shapes in a graph may be symbolic: a dim is a number or a name ("B", "T") bound when a run brings real tensors.
// Shape rules compare dims with `sameDim`, which only fails when both sides are known and differ; the runtime
// re-runs the same rules on concrete shapes, so nothing that is unknown at build time goes unchecked.

/** A dim: a known size, or a symbol such as "B" (batch) or "T" (tokens) bound at run time. */
export type Dim = number | string;
export type SymShape = readonly Dim[];

/**
 * False only when both dims are known and differ. Two different names ("L" and "S") may still be bound to the same
 * size, so they pass here and are checked when bound.
 */
export function sameDim(a: Dim, b: Dim): boolean {
  return typeof a === "number" && typeof b === "number" ? a === b : true;
}

export function formatDims(shape: SymShape): string {
  return `[${shape.join(", ")}]`;
}

/** Canonical form of a product of dims: the numeric part and the sorted symbols. */
function product(shape: SymShape): { n: number; syms: string } {
  let n = 1;
  const syms: string[] = [];
  for (const d of shape) typeof d === "number" ? (n *= d) : syms.push(d);
  return { n, syms: syms.sort().join("*") };
}

/** True unless the two shapes provably hold different element counts. */
export function sameSize(a: SymShape, b: SymShape): boolean {
  const pa = product(a);
  const pb = product(b);
  if (pa.syms === pb.syms) return pa.n === pb.n;
  return true; // different symbols: decided when they are bound
}

export function isConcrete(shape: SymShape): shape is readonly number[] {
  return shape.every((d) => typeof d === "number");
}

/** Substitutes bound symbols; symbols without a binding stay symbolic. */
export function bindDims(shape: SymShape, bindings: ReadonlyMap<string, number>): Dim[] {
  return shape.map((d) => (typeof d === "string" ? (bindings.get(d) ?? d) : d));
}
