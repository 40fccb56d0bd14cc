// Which heads of `weights` the page zero-ablates, as plain data: toggled by clicking a head, sent with every run, and
// forgotten when the config's head count changes (head 1 of a 2-head config is not head 1 of a 4-head one, and a head
// that no longer exists would fail the run). Also the numbers the page says about an ablation. Pure: no DOM.
import { formatValue } from "./tensor-stats.js";

export interface AblationState {
  /** The head count the heads were picked for; undefined before the first run request. */
  readonly numHeads: unknown;
  /** Ablated head indices, ascending, no repeats. */
  readonly heads: readonly number[];
}

export const noAblation: AblationState = { numHeads: undefined, heads: [] };

/** `state` for a config with `numHeads` heads (the form's raw value): unchanged if the count is the same, else cleared. */
export function forHeadCount(state: AblationState, numHeads: unknown): AblationState {
  return Object.is(state.numHeads, numHeads) ? state : { numHeads, heads: [] };
}

/** Head `h` ablated if it was not, restored if it was. */
export function toggleHead(state: AblationState, h: number): AblationState {
  if (!Number.isInteger(h) || h < 0)
    throw new RangeError(`toggleHead: a head index must be an integer >= 0, got ${String(h)}`);
  const heads = state.heads.includes(h)
    ? state.heads.filter((x) => x !== h)
    : [...state.heads, h].sort((a, b) => a - b);
  return { ...state, heads };
}

/**
 * max |a − b| over the elements of two equally long arrays. Where a value is not finite in either, a difference counts
 * as Infinity (a NaN that appeared is a change) and equal non-finite values count as 0.
 */
export function maxAbsDelta(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length)
    throw new RangeError(`maxAbsDelta: the outputs differ in size: ${a.length} and ${b.length} values`);
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (Object.is(x, y)) continue;
    const d =
      Number.isFinite(x) && Number.isFinite(y) ? Math.abs(x - y) : Number.isNaN(x) && Number.isNaN(y) ? 0 : Infinity;
    if (d > max) max = d;
  }
  return max;
}

/** "head 1" / "heads 0, 2". */
export function headList(heads: readonly number[]): string {
  return `${heads.length === 1 ? "head" : "heads"} ${heads.join(", ")}`;
}

/** The line the page shows about the output: what the ablation did to it, or how to start one. */
export function ablationLine(heads: readonly number[], delta: number | undefined, output: string): string {
  if (heads.length === 0 || delta === undefined)
    return `no head ablated: click a head's heatmap to zero its weights and see what ${output} loses`;
  return `ablating ${headList(heads)} changed ${output} by max |Δ| = ${formatValue(delta)} (against the same config run without the ablation)`;
}
