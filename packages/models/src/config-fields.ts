// Reading a config object of PyTorch-style fields: each read names the field and says what it expected, so a
// `{ n_head: "4" }` is an error about config.n_head, not a NaN three layers down.
import { AttnGraphError } from "@attngraph/tensor";

/** A model config, checkpoint or option that cannot be used: names the field, what was expected and what came. */
export class ModelConfigError extends AttnGraphError {
  constructor(subject: string, what: string, expected: string, got: string) {
    super("model-config", `${subject}: ${what} (expected ${expected}, got ${got})`, { subject, expected, got });
    this.name = "ModelConfigError";
  }
}

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v).slice(0, 60);
  if (v === null || v === undefined) return String(v);
  if (typeof v === "object") return Array.isArray(v) ? "an array" : "an object";
  return `${typeof v} ${String(v)}`;
}

type Fields = Readonly<Record<string, unknown>>;

/**
 * The caller's config (PyTorch's or Hugging Face's field names), read field by field: each read checks the value's
 * type and range and names the field in its error. Sizes the checkpoint's shapes already say are read through
 * `agreeing` (the caller's value, when given, must say the same).
 */
export class ConfigFields {
  /** `input` absent is `{}`; anything but a plain object, or a field `known` does not list (nor `ignored`), is an error. */
  constructor(
    input: unknown,
    example: string,
    unknownField: string,
    known: Iterable<string>,
    ignored: ReadonlySet<string> = new Set(),
  ) {
    const c = input ?? {};
    if (typeof c !== "object" || c === null || Array.isArray(c))
      throw new ModelConfigError("config", "not a config object", `an object such as ${example}`, String(c));
    const names = [...known];
    for (const key of Object.keys(c))
      if (!names.includes(key) && !ignored.has(key))
        throw new ModelConfigError(`config.${key}`, unknownField, names.join(", "), key);
    this.fields = c as Fields;
  }

  /** The raw fields, for rules of one model family. */
  readonly fields: Fields;

  /** An integer field (>= min), or undefined when absent (null counts as absent, as Hugging Face writes it). */
  integer(key: string, min = 1): number | undefined {
    const v = this.fields[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min)
      throw new ModelConfigError(`config.${key}`, "invalid value", `an integer >= ${min}`, show(v));
    return v;
  }

  optional(key: string, type: "boolean"): boolean | undefined;
  optional(key: string, type: "string"): string | undefined;
  optional(key: string, type: "number"): number | undefined;
  optional(key: string, type: "boolean" | "string" | "number"): unknown {
    const v = this.fields[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== type || (type === "number" && !Number.isFinite(v)))
      throw new ModelConfigError(`config.${key}`, "invalid value", `a ${type}`, show(v));
    return v;
  }

  /** A value the checkpoint's shapes say; the caller's `given`, when there, must say the same (`where` says which). */
  agreeing<T extends number | boolean>(key: string, given: T | undefined, fromShapes: T, where: string): T {
    if (given !== undefined && given !== fromShapes)
      throw new ModelConfigError(
        `config.${key}`,
        `disagrees with the checkpoint (${where})`,
        String(fromShapes),
        String(given),
      );
    return fromShapes;
  }

  /** The number of heads (no weight's shape holds it): `heads` given, dividing the model width (`widthKey`). */
  heads(heads: number | undefined, key: string, width: number, widthKey: string, example = ""): number {
    if (heads === undefined)
      throw new ModelConfigError(
        `config.${key}`,
        "the number of heads is in no weight's shape: pass it",
        `an integer dividing ${widthKey} ${width}${example}`,
        "none",
      );
    if (heads < 1 || width % heads !== 0)
      throw new ModelConfigError(
        `config.${key}`,
        `${key} must divide ${widthKey}`,
        `a divisor of ${width}`,
        String(heads),
      );
    return heads;
  }

  /** A positive number field (an epsilon, RoPE's base), `fallback` when absent. */
  positive(key: string, fallback: number): number {
    const v = this.optional(key, "number") ?? fallback;
    if (!(v > 0)) throw new ModelConfigError(`config.${key}`, "must be positive", "> 0", String(v));
    return v;
  }

  /** The dropout probability torch's modules take: checked, not applied (the models run in eval). */
  dropout(): number | undefined {
    const dropout = this.optional("dropout", "number");
    if (dropout !== undefined && (dropout < 0 || dropout > 1))
      throw new ModelConfigError(
        "config.dropout",
        "a probability",
        "0 <= dropout <= 1 (eval: not applied)",
        String(dropout),
      );
    return dropout;
  }
}
