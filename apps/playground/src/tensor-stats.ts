// Numbers about a tapped tensor, for the tensor view: summary statistics and 2-D slices. Pure (row-major data plus a
// shape), so it is unit-tested without a browser.

export interface TensorStats {
  readonly count: number;
  /** Over the finite values only; NaN when there are none. */
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  /** −∞ entries are masked scores (the mask node writes them), reported apart from the statistics. */
  readonly negInf: number;
  readonly posInf: number;
  readonly nan: number;
}

export function tensorStats(values: ArrayLike<number>): TensorStats {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let finite = 0;
  let negInf = 0;
  let posInf = 0;
  let nan = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isFinite(v)) {
      finite++;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    } else if (v === -Infinity) negInf++;
    else if (v === Infinity) posInf++;
    else nan++;
  }
  return finite === 0
    ? { count: values.length, min: NaN, max: NaN, mean: NaN, negInf, posInf, nan }
    : { count: values.length, min, max, mean: sum / finite, negInf, posInf, nan };
}

/** One 2-D slice of a tensor: its last two axes at one index of the leading ones. */
export interface MatrixSlice {
  readonly rows: number;
  readonly cols: number;
  /** How many slices the leading axes hold. */
  readonly slices: number;
  /** The index of each leading axis for this slice. */
  readonly lead: readonly number[];
  at(row: number, col: number): number;
}

/**
 * The `slice`-th matrix of a row-major tensor (rank 0 and 1 become one row). `slice` is clamped to the valid range,
 * so a stale selection after a shape change still shows something.
 */
export function matrixSlice(shape: readonly number[], data: ArrayLike<number>, slice: number): MatrixSlice {
  const rank = shape.length;
  const rows = rank >= 2 ? shape[rank - 2]! : 1;
  const cols = rank >= 1 ? shape[rank - 1]! : 1;
  const leadShape = rank > 2 ? shape.slice(0, rank - 2) : [];
  const slices = leadShape.reduce((a, d) => a * d, 1);
  const s = Math.min(Math.max(0, Math.trunc(slice)), Math.max(0, slices - 1));
  const lead: number[] = [];
  for (let rest = s, k = leadShape.length - 1; k >= 0; k--) {
    lead.unshift(rest % leadShape[k]!);
    rest = Math.floor(rest / leadShape[k]!);
  }
  const base = s * rows * cols;
  return { rows, cols, slices, lead, at: (r, c) => data[base + r * cols + c]! };
}

/** "[0, 1, :, :]" for the slice's place in the tensor. */
export function sliceLabel(shape: readonly number[], slice: MatrixSlice): string {
  const tail = shape.length >= 2 ? [":", ":"] : shape.length === 1 ? [":"] : [];
  return `[${[...slice.lead.map(String), ...tail].join(", ")}]`;
}

/** A number as the page prints it: 6 significant digits, and the infinities and NaN in words. */
export function formatValue(v: number): string {
  if (v === -Infinity) return "−∞";
  if (v === Infinity) return "+∞";
  if (Number.isNaN(v)) return "NaN";
  return Number(v.toPrecision(6)).toString();
}
