// Printing that reads like PyTorch's `print(tensor)`, so the demo output can be laid beside the worked examples.
// Follows torch/_tensor_str.py in spirit: one number format for the whole tensor (integers as "1.", fixed with 4
// decimals, or scientific when the range is wide), right-aligned columns, and summarised with "..." past 1000 elements.
import type { Shape } from "./shape.js";

const THRESHOLD = 1000;
const EDGE_ITEMS = 3;
const PREFIX = "tensor(";

export function formatTensor(shape: Shape, values: Float32Array): string {
  const summarize = values.length > THRESHOLD;
  const fmt = chooseFormat(values);
  const width = Math.max(1, ...sample(values).map((v) => fmt(v).length));
  const cell = (v: number): string => fmt(v).padStart(width);
  if (shape.length === 0) return `${PREFIX}${fmt(values[0] ?? 0)})`;
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, d) => a * d, 1));
  const block = (depth: number, start: number): string => {
    const n = shape[depth]!;
    const items = summarize && n > 2 * EDGE_ITEMS ? [...range(0, EDGE_ITEMS), -1, ...range(n - EDGE_ITEMS, n)] : range(0, n);
    if (depth === shape.length - 1) {
      return `[${items.map((i) => (i < 0 ? "..." : cell(values[start + i]!))).join(", ")}]`;
    }
    const indent = " ".repeat(PREFIX.length + depth + 1);
    const gap = ",\n" + "\n".repeat(shape.length - depth - 2) + indent;
    return `[${items.map((i) => (i < 0 ? "..." : block(depth + 1, start + i * strides[depth]!))).join(gap)}]`;
  };
  return `${PREFIX}${block(0, 0)})`;
}

function range(a: number, b: number): number[] {
  return Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);
}

function sample(values: Float32Array): number[] {
  return values.length > THRESHOLD ? [...values.subarray(0, 500), ...values.subarray(values.length - 500)] : [...values];
}

function chooseFormat(values: Float32Array): (v: number) => string {
  const finite = sample(values).filter((v) => Number.isFinite(v));
  const special = (v: number): string | undefined => (Number.isNaN(v) ? "nan" : v === Infinity ? "inf" : v === -Infinity ? "-inf" : undefined);
  if (finite.length > 0 && finite.every((v) => Number.isInteger(v)) && Math.max(...finite.map(Math.abs)) < 1e8) {
    return (v) => special(v) ?? `${v}.`;
  }
  const abs = finite.map(Math.abs).filter((v) => v > 0);
  const max = abs.length ? Math.max(...abs) : 0;
  const min = abs.length ? Math.min(...abs) : 0;
  const sci = max >= 1e8 || (abs.length > 0 && (min < 1e-4 || max / min > 1000));
  return sci ? (v) => special(v) ?? sciFormat(v) : (v) => special(v) ?? (v === 0 ? "0.0000" : v.toFixed(4));
}

// torch prints 1.2346e+05 (two-digit exponent at least); JS toExponential gives 1.2346e+5.
function sciFormat(v: number): string {
  const [m, e] = v.toExponential(4).split("e") as [string, string];
  const sign = e.startsWith("-") ? "-" : "+";
  return `${m}e${sign}${e.replace(/^[-+]/, "").padStart(2, "0")}`;
}
