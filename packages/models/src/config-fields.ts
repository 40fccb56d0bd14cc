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

/** An integer field (>= 1), or undefined when absent (null counts as absent, as Hugging Face writes it). */
export function integerField(c: Readonly<Record<string, unknown>>, key: string, min = 1): number | undefined {
  const v = c[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min)
    throw new ModelConfigError(`config.${key}`, "invalid value", `an integer >= ${min}`, show(v));
  return v;
}

export function optionalField(c: Readonly<Record<string, unknown>>, key: string, type: "boolean"): boolean | undefined;
export function optionalField(c: Readonly<Record<string, unknown>>, key: string, type: "string"): string | undefined;
export function optionalField(c: Readonly<Record<string, unknown>>, key: string, type: "number"): number | undefined;
export function optionalField(
  c: Readonly<Record<string, unknown>>,
  key: string,
  type: "boolean" | "string" | "number",
): unknown {
  const v = c[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type || (type === "number" && !Number.isFinite(v)))
    throw new ModelConfigError(`config.${key}`, "invalid value", `a ${type}`, show(v));
  return v;
}
