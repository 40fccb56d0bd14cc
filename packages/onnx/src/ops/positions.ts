// Query and key positions of a [B, H, L, S] score tensor, as int64 grids the model builds at run time from L and S
// (which may be symbolic): the query's key position pos [L, 1] (i, or i + S − L under "bottom-right" alignment, the
// cpu kernels' maskOffset) and the key index j [1, S]. Mask and ALiBi compare and subtract them.
import type { MaskGeometry } from "@attngraph/graph";
import type { Lowering } from "../lowering.js";

export interface PositionGrid {
  /** [L, 1] int64: the key position query i stands at. */
  readonly pos: string;
  /** [1, S] int64: key j. */
  readonly key: string;
}

/** Positions for scores read through `scores` (any value of shape [B, H, L, S]). */
export function positionGrid(l: Lowering, scores: string, alignment: MaskGeometry["alignment"]): PositionGrid {
  const L = l.dimScalar({ of: scores, axis: 2 });
  const S = l.dimScalar({ of: scores, axis: 3 });
  const zero = l.constant("int64", [0], []);
  const one = l.constant("int64", [1], []);
  const i = l.emit("Unsqueeze", [l.emit("Range", [zero, L, one]), l.constant("int64", [1])]); // [L, 1]
  const key = l.emit("Unsqueeze", [l.emit("Range", [zero, S, one]), l.constant("int64", [0])]); // [1, S]
  const pos = alignment === "bottom-right" ? l.emit("Add", [i, l.emit("Sub", [S, L])]) : i;
  return { pos, key };
}

/**
 * [L, S] bool, true where position hides the key: causal hides j > pos; a window w also hides j <= pos − w. Undefined
 * when position hides nothing (not causal).
 */
export function positionHidden(l: Lowering, scores: string, geometry: MaskGeometry): string | undefined {
  if (!geometry.causal) return undefined;
  const { pos, key } = positionGrid(l, scores, geometry.alignment);
  const future = l.emit("Greater", [key, pos]);
  if (geometry.window === null) return future;
  const old = l.emit("LessOrEqual", [key, l.emit("Sub", [pos, l.constant("int64", [geometry.window], [])])]);
  return l.emit("Or", [future, old]);
}

/** [B, 1, 1, S] bool, true for a padded key (keyPaddingMask [B, S] value 1). */
export function paddingHidden(l: Lowering, keyPaddingMask: string): string {
  const padded = l.emit("Equal", [keyPaddingMask, l.constant("float", [1], [])]); // [B, S]
  return l.emit("Unsqueeze", [padded, l.constant("int64", [1, 2])]);
}

/** hidden ∨ … over the parts present; undefined when none is. */
export function anyHidden(l: Lowering, parts: readonly (string | undefined)[]): string | undefined {
  return parts
    .filter((p): p is string => p !== undefined)
    .reduce<string | undefined>((acc, p) => (acc === undefined ? p : l.emit("Or", [acc, p])), undefined);
}

/** x with −∞ where `hidden` is true (hidden broadcasts against x [B, H, L, S]). */
export function hide(l: Lowering, x: string, hidden: string | undefined): string {
  return hidden === undefined ? x : l.emit("Where", [hidden, l.constant("float", [-Infinity], []), x]);
}
