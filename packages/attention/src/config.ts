// The attention configuration: the `config` object of the golden cases (shared/golden/FORMAT.md), plus the builder's
// own options. Every key is checked here, once, with an error naming the key.
import { AttnGraphError, clip, describe } from "@attngraph/tensor";

export interface AttentionConfig {
  /** Input features per token (E_in). */
  readonly dIn: number;
  /** Projected features, all heads together (E = H · D). */
  readonly dOut: number;
  /** Query heads H; head dim D = dOut / numHeads. */
  readonly numHeads: number;
  /** Key/value heads Hkv (grouped-query when < numHeads, multi-query when 1). Default numHeads. */
  readonly numKvHeads: number;
  /** Query i sees only keys j <= i. */
  readonly causal: boolean;
  /** Sliding window (needs causal): query i sees keys j with i - window < j <= i. null = none. */
  readonly window: number | null;
  /** Bias on the query/key/value projections. */
  readonly qkvBias: boolean;
  /** A final output projection. */
  readonly outProj: boolean;
  /** Bias on the output projection. */
  readonly outBias: boolean;
  /** Score scale; null means 1/sqrt(D). */
  readonly scale: number | null;
  /** Keys/values come from a second input `kv` [B, S, dIn]. */
  readonly cross: boolean;
  /** Dropout rate on the attention weights (applied only in training mode). */
  readonly dropout: number;
}

export type AttentionConfigInput = Partial<AttentionConfig> & Pick<AttentionConfig, "dIn" | "dOut" | "numHeads">;

/** A config key that is missing, of the wrong type or inconsistent with another key. */
export class ConfigError extends AttnGraphError {
  constructor(key: string, what: string, expected?: string, got?: string) {
    super("config", describe(`config.${key}`, what, expected, got), {
      subject: `config.${key}`,
      ...(expected === undefined ? {} : { expected }),
      ...(got === undefined ? {} : { got }),
    });
    this.name = "ConfigError";
  }
}

const KEYS = [
  "dIn",
  "dOut",
  "numHeads",
  "numKvHeads",
  "causal",
  "window",
  "qkvBias",
  "outProj",
  "outBias",
  "scale",
  "cross",
  "dropout",
];

/** Fills defaults and checks every key and the rules between keys. */
export function normalizeConfig(raw: AttentionConfigInput | Record<string, unknown>): AttentionConfig {
  if (typeof raw !== "object" || raw === null)
    throw new ConfigError("", "config must be an object", "an object", shown(raw));
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!KEYS.includes(k)) throw new ConfigError(k, "unknown key", KEYS.join(", "), k);
  const int = (k: string, min: number, dflt?: number): number => {
    const v = r[k] ?? dflt;
    if (!Number.isSafeInteger(v) || (v as number) < min)
      throw new ConfigError(k, "invalid value", `an integer >= ${min}`, shown(v));
    return v as number;
  };
  const bool = (k: string, dflt: boolean): boolean => {
    const v = r[k] ?? dflt;
    if (typeof v !== "boolean") throw new ConfigError(k, "invalid value", "true or false", shown(v));
    return v;
  };
  const dIn = int("dIn", 1);
  const dOut = int("dOut", 1);
  const numHeads = int("numHeads", 1);
  const numKvHeads = int("numKvHeads", 1, numHeads);
  const causal = bool("causal", false);
  const cross = bool("cross", false);
  const window = r.window ?? null;
  if (window !== null && (!Number.isSafeInteger(window) || (window as number) < 1)) {
    throw new ConfigError("window", "invalid window", "an integer >= 1 or null", shown(window));
  }
  const scale = r.scale ?? null;
  if (scale !== null && (typeof scale !== "number" || !Number.isFinite(scale))) {
    throw new ConfigError("scale", "invalid scale", "a finite number or null", shown(scale));
  }
  const dropout = r.dropout ?? 0;
  if (typeof dropout !== "number" || !(dropout >= 0 && dropout < 1)) {
    throw new ConfigError("dropout", "invalid dropout rate", "a number in [0, 1)", shown(dropout));
  }
  if (dOut % numHeads !== 0)
    throw new ConfigError("dOut", "dOut must be divisible by numHeads", `a multiple of ${numHeads}`, String(dOut));
  if (numHeads % numKvHeads !== 0) {
    throw new ConfigError(
      "numKvHeads",
      "numHeads must be divisible by numKvHeads",
      `a divisor of ${numHeads}`,
      String(numKvHeads),
    );
  }
  if (window !== null && !causal)
    throw new ConfigError("window", "a sliding window needs causal", "causal: true", "causal: false");
  if (causal && cross)
    throw new ConfigError("causal", "causal attention needs self-attention", "cross: false", "cross: true");
  const outProj = bool("outProj", true);
  const outBias = bool("outBias", outProj);
  if (outBias && !outProj)
    throw new ConfigError("outBias", "an output bias needs an output projection", "outProj: true", "outProj: false");
  return {
    dIn,
    dOut,
    numHeads,
    numKvHeads,
    causal,
    window: window as number | null,
    qkvBias: bool("qkvBias", false),
    outProj,
    outBias,
    scale: scale as number | null,
    cross,
    dropout,
  };
}

/**
 * The offending value for a message, short whatever came: a string is cut before it is quoted (a 4 MB value must not
 * be copied into a 4 MB message), and arrays, objects and BigInts are named rather than serialised (JSON.stringify
 * walks all of them, and throws on a BigInt or a cycle).
 */
function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(clip(v, 100));
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object" && v !== null) return "an object";
  return typeof v === "bigint" ? `${clip(String(v), 100)}n` : String(v);
}

/** Head dim D. */
export function headDim(c: AttentionConfig): number {
  return c.dOut / c.numHeads;
}

/** The score scale in effect: the configured one, else 1/sqrt(D). */
export function effectiveScale(c: AttentionConfig): number {
  return c.scale ?? 1 / Math.sqrt(headDim(c));
}
