// Printing that reads like PyTorch's `print(tensor)`, so the demo output can be laid beside the worked examples.
// Follows torch/_tensor_str.py with its default print options (precision 4, threshold 1000, edgeitems 3,
// linewidth 80): one number format for the whole tensor, chosen from its nonzero finite values only (integers as
// "1.", fixed with 4 decimals, or scientific when the range is wide), every cell padded to that format's width,
// rows wrapped at 80 columns, and summarised with "..." past 1000 elements.
import { ShapeError } from "./errors.js";
import { contiguousStrides, formatShape, sizeOf, type Shape } from "./shape.js";

const PRECISION = 4;
const THRESHOLD = 1000;
const EDGE_ITEMS = 3;
const LINE_WIDTH = 80;
const PREFIX = "tensor(";

/**
 * PyTorch's `str(tensor)` for a tensor of this shape whose row-major elements are `values`. An int32 tensor prints its
 * integers as torch prints an integer tensor (`tensor([3, 1, 4])`, no decimal point).
 */
export function formatTensor(
  shape: Shape,
  values: Float32Array | Int32Array,
  dtype: "float32" | "int32" = "float32",
): string {
  const size = sizeOf(shape);
  if (values.length !== size) {
    throw new ShapeError(
      "formatTensor",
      "value count does not match the shape",
      `${size} values for ${formatShape(shape)}`,
      `${values.length}`,
    );
  }
  // torch prints the size of an empty tensor unless it is 1-D: tensor([]) but tensor([], size=(0, 3)).
  if (size === 0) return shape.length === 1 ? `${PREFIX}[])` : `${PREFIX}[], size=(${shape.join(", ")}))`;
  const summarize = size > THRESHOLD;
  const strides = contiguousStrides(shape);
  // Which indices of a dim of length n are printed; -1 stands for the "..." between the edges.
  const items = (n: number): number[] =>
    summarize && n > 2 * EDGE_ITEMS ? [...range(0, EDGE_ITEMS), -1, ...range(n - EDGE_ITEMS, n)] : range(0, n);

  // Like torch, the number format is chosen from the elements that are printed, not from the whole tensor.
  const shown: number[] = [];
  const collect = (depth: number, start: number): void => {
    if (depth === shape.length) {
      shown.push(values[start]!);
      return;
    }
    for (const i of items(shape[depth]!)) if (i >= 0) collect(depth + 1, start + i * strides[depth]!);
  };
  collect(0, 0);
  const fmt = dtype === "int32" ? integerFormatter(shown) : makeFormatter(shown);

  const vector = (start: number, n: number, indent: number): string => {
    const perLine = Math.max(1, Math.floor((LINE_WIDTH - indent) / (fmt.width + 2)));
    const cells = items(n).map((i) => (i < 0 ? " ..." : fmt.format(values[start + i]!)));
    const lines: string[] = [];
    for (let i = 0; i < cells.length; i += perLine) lines.push(cells.slice(i, i + perLine).join(", "));
    return `[${lines.join(`,\n${" ".repeat(indent + 1)}`)}]`;
  };
  const block = (depth: number, start: number, indent: number): string => {
    const dim = shape.length - depth;
    if (dim === 1) return vector(start, shape[depth]!, indent);
    const slices = items(shape[depth]!).map((i) =>
      i < 0 ? "..." : block(depth + 1, start + i * strides[depth]!, indent + 1),
    );
    // A 3-D tensor puts one blank line between its matrices, a 4-D one two, and so on.
    return `[${slices.join(`,${"\n".repeat(dim - 1)}${" ".repeat(indent + 1)}`)}]`;
  };
  return shape.length === 0 ? `${PREFIX}${fmt.format(values[0]!)})` : `${PREFIX}${block(0, 0, PREFIX.length)})`;
}

interface Formatter {
  readonly width: number;
  format(v: number): string;
}

/** Integers as torch prints an integer tensor: plain digits, right-aligned to the widest shown. */
function integerFormatter(values: readonly number[]): Formatter {
  const width = values.reduce((w, v) => Math.max(w, String(v).length), 1);
  return { width, format: (v) => String(v).padStart(width) };
}

/** torch's `_Formatter`: the mode and width come from the nonzero finite values; nan and inf never widen a column. */
function makeFormatter(values: readonly number[]): Formatter {
  const nonzero = values.filter((v) => Number.isFinite(v) && v !== 0);
  let intMode = true;
  let sciMode = false;
  let width = 1;
  if (nonzero.length > 0) {
    const abs = nonzero.map(Math.abs);
    const min = Math.min(...abs);
    const max = Math.max(...abs);
    intMode = nonzero.every((v) => v === Math.ceil(v));
    sciMode = max / min > 1000 || max > 1e8 || (!intMode && min < 1e-4);
    for (const v of nonzero) width = Math.max(width, finite(v, intMode, sciMode).length);
  }
  return {
    width,
    format: (v) =>
      (Number.isFinite(v) ? finite(v, intMode, sciMode) : Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf").padStart(
        width,
      ),
  };
}

function finite(v: number, intMode: boolean, sciMode: boolean): string {
  if (sciMode) return scientific(v);
  return intMode ? `${fixed(v, 0)}.` : fixed(v, PRECISION);
}

/** Python's `f"{v:.{digits}f}"`: exact value, rounded half to even, "-" kept on negative zero. */
function fixed(v: number, digits: number): string {
  const s = scaled(v, digits)
    .toString()
    .padStart(digits + 1, "0");
  const body = digits === 0 ? s : `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  return sign(v) + body;
}

/** Python's `f"{v:.4e}"`: 1.0000e-05, 1.2346e+05 (at least two exponent digits). */
function scientific(v: number): string {
  if (v === 0) return `${sign(v)}0.${"0".repeat(PRECISION)}e+00`;
  let e = Math.floor(Math.log10(Math.abs(v)));
  let n = scaled(v, PRECISION - e);
  // log10 can be off by one near powers of ten, and rounding can carry into a new digit: settle the exponent.
  const lo = 10n ** BigInt(PRECISION);
  for (let tries = 0; tries < 4 && (n < lo || n >= lo * 10n); tries++) {
    e += n < lo ? -1 : 1;
    n = scaled(v, PRECISION - e);
  }
  const m = n.toString();
  const exp = `${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return `${sign(v)}${m[0]}.${m.slice(1)}e${exp}`;
}

function sign(v: number): string {
  return v < 0 || Object.is(v, -0) ? "-" : "";
}

/**
 * |v| · 10^p rounded half to even, exactly. A double is m · 2^e, so its decimal expansion is finite; JS's toFixed and
 * toExponential round ties away from zero (0.03125 → "0.0313") where Python, and so torch, prints "0.0312".
 */
function scaled(v: number, p: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(v));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const frac = bits & ((1n << 52n) - 1n);
  const mant = biased === 0 ? frac : frac | (1n << 52n);
  const e2 = (biased === 0 ? 1 : biased) - 1075;
  // |v| = mant · 2^e2 = digits · 10^e10
  const digits = e2 >= 0 ? mant << BigInt(e2) : mant * 5n ** BigInt(-e2);
  const e10 = e2 >= 0 ? 0 : e2;
  const t = e10 + p;
  if (t >= 0) return digits * 10n ** BigInt(t);
  const div = 10n ** BigInt(-t);
  const q = digits / div;
  const r2 = (digits % div) * 2n;
  return r2 > div || (r2 === div && q % 2n === 1n) ? q + 1n : q;
}

function range(a: number, b: number): number[] {
  return Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);
}
