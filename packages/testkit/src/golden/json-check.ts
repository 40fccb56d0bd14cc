// Small checkers for untrusted JSON. Each takes the JSON path of the value it checks and fails with a
// CaseFormatError naming the file, the path, what was expected and what came. Nothing here trusts a type: a
// malformed case must give a readable error, never a TypeError from deep inside the loader.
import { formatShape, sizeOf, type Tolerance } from "@attngraph/tensor";
import { CaseFormatError } from "./errors.js";

/** The largest finite float32. Larger values become Infinity when stored in a Float32Array. */
const FLOAT32_MAX = 3.4028234663852886e38;

export type JsonObject = Readonly<Record<string, unknown>>;

/** A tensor as it is written in a case file: row-major float64 values and their shape. */
export interface JsonTensor {
  readonly shape: number[];
  readonly data: number[];
}

export class JsonChecker {
  constructor(readonly file: string) {}

  fail(path: string, what: string, expected?: string, got?: string, cause?: unknown): never {
    throw new CaseFormatError(this.file, path, what, expected, got, cause);
  }

  object(v: unknown, path: string): JsonObject {
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(path, "wrong type", "an object", show(v));
    return v as JsonObject;
  }

  /** A field that must be present; `path` is the path of the object holding it. */
  field(o: JsonObject, key: string, path: string): unknown {
    if (!Object.hasOwn(o, key)) this.fail(`${path}${pathKey(key)}`, "missing field", "present", "absent");
    return o[key];
  }

  string(v: unknown, path: string): string {
    if (typeof v !== "string") this.fail(path, "wrong type", "a string", show(v));
    return v;
  }

  /** A finite number in [`min`, `max`]. JSON has no NaN or Infinity, so strings such as "NaN" are the way they sneak in. */
  number(v: unknown, path: string, min = -Infinity, max = Infinity): number {
    if (typeof v !== "number" || !Number.isFinite(v)) this.fail(path, "wrong type", "a finite number", show(v));
    if (v < min) this.fail(path, "out of range", `>= ${min}`, String(v));
    if (v > max) this.fail(path, "out of range", `<= ${max}`, String(v));
    return v;
  }

  /** `$.tolerance` of a case: `{abs, rel}`, each a finite number in [0, `max`]. */
  tolerance(root: JsonObject, max: number): Tolerance {
    const tol = this.object(this.field(root, "tolerance", "$"), "$.tolerance");
    return {
      abs: this.number(this.field(tol, "abs", "$.tolerance"), "$.tolerance.abs", 0, max),
      rel: this.number(this.field(tol, "rel", "$.tolerance"), "$.tolerance.rel", 0, max),
    };
  }

  /**
   * `{shape: int[], data: number[]}` with data.length = product of the shape and every entry finite as a float32:
   * tensors are float32, so 1e39 would become Infinity on load and the case would end in NaN.
   */
  tensor(v: unknown, path: string): JsonTensor {
    const o = this.object(v, path);
    const shape = this.field(o, "shape", path);
    if (!Array.isArray(shape)) this.fail(`${path}.shape`, "wrong type", "an array of integers", show(shape));
    shape.forEach((d: unknown, i) => {
      if (!Number.isSafeInteger(d) || (d as number) < 0)
        this.fail(`${path}.shape[${i}]`, "invalid dim", "an integer >= 0", show(d));
    });
    const dims = shape as number[];
    const data = this.field(o, "data", path);
    if (!Array.isArray(data)) this.fail(`${path}.data`, "wrong type", "an array of numbers", show(data));
    const n = sizeOf(dims);
    if (data.length !== n)
      this.fail(`${path}.data`, "wrong length", `${n} values for ${formatShape(dims)}`, String(data.length));
    for (let i = 0; i < data.length; i++) {
      const x: unknown = data[i];
      if (typeof x !== "number" || !Number.isFinite(x))
        this.fail(`${path}.data[${i}]`, "not a finite number", "a finite number", show(x));
      if (Math.abs(x) > FLOAT32_MAX)
        this.fail(`${path}.data[${i}]`, "outside the float32 range", `|v| <= ${FLOAT32_MAX}`, show(x));
    }
    return { shape: dims, data: data as number[] };
  }
}

/** `.key` for identifiers, `["key"]` otherwise, as JSON path tools write it. */
export function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** A short rendering of any JSON value for messages; never the whole of a 10 MB string. */
export function show(v: unknown): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "string")
    return v.length > 40
      ? `a string of ${v.length} characters (${JSON.stringify(v.slice(0, 20))}...)`
      : JSON.stringify(v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") return "an object";
  return String(v);
}
