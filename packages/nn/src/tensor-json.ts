// A tensor as JSON files write it (golden cases, checkpoints dumped with `tensor.tolist()`): a shape and row-major
// numbers. Float32Array.from would turn "abc" and NaN into NaN, null into 0 and 1e39 into Infinity without a word, and
// a weight that silently became NaN or ∞ shows up only much later as a NaN loss; so every element is checked first.

/** A tensor as JSON files write it (golden cases): row-major data and a shape. */
export interface TensorJSON {
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
}

/** An object with an array `shape` and an array-like `data`: the JSON form (its values are checked separately). */
export function isTensorJSON(v: unknown): v is TensorJSON {
  return (
    typeof v === "object" &&
    v !== null &&
    Array.isArray((v as TensorJSON).shape) &&
    typeof (v as TensorJSON).data === "object" &&
    (v as TensorJSON).data !== null
  );
}

/** What a JSON element must be: a number that rounds to a finite float32 (|x| below about 3.4e38); 1e-50 becomes 0. */
export const FLOAT32_ELEMENT = "a finite float32 number";

/** The first element of `data` that is not a number rounding to a finite float32, and how to show it; or undefined. */
export function firstBadElement(data: ArrayLike<number>): { index: number; got: string } | undefined {
  for (let i = 0; i < data.length; i++) {
    const v: unknown = data[i];
    // Math.fround rounds as the Float32Array store will: 3.40282356e38 becomes the largest float32, 3.4028236e38 ∞.
    if (typeof v === "number" && Number.isFinite(Math.fround(v))) continue;
    return { index: i, got: show(v) };
  }
  return undefined;
}

/** A bad element for a message, short: a 4 MB string is cut to 40 characters. */
function show(v: unknown): string {
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (Array.isArray(v)) return "an array (data must be flat)"; // nested lists, as tolist() writes them
  if (typeof v === "object" && v !== null) return "an object";
  return String(v); // null, undefined (a hole), NaN, Infinity, 1e+39, true
}
