// Tensors as JSON that round-trips exactly: float32 values written as the shortest decimal that reads back to the same
// float32 (JavaScript's number printing of the widened value), and the values JSON has no literal for (NaN, ±∞: masked
// scores hold −∞) as the strings "NaN", "Infinity", "-Infinity".
import { AttnGraphError, Tensor, clip, type AnyTensor, type DType } from "@attngraph/tensor";

export interface TensorJSON {
  readonly shape: readonly number[];
  /** Absent: float32. */
  readonly dtype?: "int32";
  readonly data: readonly (number | "NaN" | "Infinity" | "-Infinity")[];
}

/** A repro file (or any tensor document) that does not follow its format: `path` names the JSON field at fault. */
export class ReproFormatError extends AttnGraphError {
  constructor(path: string, what: string, expected: string, got: string) {
    super("repro-format", `${path}: ${what}: expected ${expected}, got ${clip(got, 80)}`, {
      subject: path,
      expected,
      got,
    });
    this.name = "ReproFormatError";
  }
}

export function tensorToJSON(t: AnyTensor): TensorJSON {
  if (t.dtype === "int32") return { shape: [...t.shape], dtype: "int32", data: Array.from(t.toInt32Array()) };
  const data = Array.from(t.toFloat32Array(), (v) =>
    Number.isFinite(v) ? v : (String(v) as "NaN" | "Infinity" | "-Infinity"),
  );
  return { shape: [...t.shape], data };
}

const SPECIAL: Readonly<Record<string, number>> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

/** Reads a TensorJSON at `path`, every field checked (a ReproFormatError names the first one at fault). */
export function tensorFromJSON(json: unknown, path: string): AnyTensor {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new ReproFormatError(path, "not a tensor", "{ shape, data }", typeof json);
  const { shape, data, dtype } = json as Record<string, unknown>;
  for (const key of Object.keys(json)) {
    if (key !== "shape" && key !== "data" && key !== "dtype")
      throw new ReproFormatError(`${path}.${key}`, "unknown field", "shape, data or dtype", key);
  }
  if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || (d as number) < 0))
    throw new ReproFormatError(
      `${path}.shape`,
      "invalid shape",
      "a list of integers >= 0",
      JSON.stringify(shape) ?? String(shape),
    );
  if (dtype !== undefined && dtype !== "int32")
    throw new ReproFormatError(`${path}.dtype`, "unknown dtype", '"int32" or absent (float32)', String(dtype));
  const size = (shape as number[]).reduce((a, b) => a * b, 1);
  if (!Array.isArray(data) || data.length !== size) {
    throw new ReproFormatError(
      `${path}.data`,
      "wrong length",
      `${size} values for shape [${(shape as number[]).join(", ")}]`,
      Array.isArray(data) ? `${data.length} values` : typeof data,
    );
  }
  const kind: DType = dtype === "int32" ? "int32" : "float32";
  const values = new Float64Array(size);
  for (let i = 0; i < size; i++) {
    const v = data[i];
    const n =
      typeof v === "number" ? v : typeof v === "string" && kind === "float32" && v in SPECIAL ? SPECIAL[v]! : undefined;
    if (n === undefined || (kind === "int32" && !(Number.isInteger(n) && n >= -2147483648 && n <= 2147483647))) {
      throw new ReproFormatError(
        `${path}.data[${i}]`,
        "invalid value",
        kind === "int32" ? "an int32 integer" : 'a number, "NaN", "Infinity" or "-Infinity"',
        JSON.stringify(v) ?? String(v),
      );
    }
    values[i] = n;
  }
  return kind === "int32" ? Tensor.int32(values, shape as number[]) : Tensor.from(values, shape as number[]);
}
