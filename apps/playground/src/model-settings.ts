// The Model tab's generation options, read from the form's strings and checked, with a message naming the field. The
// defaults are nanoGPT's sample.py (max_new_tokens 500 is cut to 20: the page decodes on the picked executor, token by
// token, and a small model on cpu should finish in a blink).

export interface GenerateSettings {
  readonly executor: string;
  readonly maxNewTokens: number;
  readonly temperature: number;
  /** Undefined: every token stays a candidate. */
  readonly topK: number | undefined;
  /** Undefined: no nucleus cut. */
  readonly topP: number | undefined;
  readonly seed: number;
  readonly greedy: boolean;
}

export const GENERATE_DEFAULTS: GenerateSettings = {
  executor: "cpu",
  maxNewTokens: 20,
  temperature: 0.8,
  topK: 200,
  topP: undefined,
  seed: 1337,
  greedy: false,
};

/** More new tokens than this is a typo: each is one decoder step, drawn into the page. */
export const MAX_NEW_TOKENS = 4096;

export class GenerateSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError"; // the errors view's "Bad config"
  }
}

function field(name: string, raw: string, ok: (v: number) => boolean, expected: string): number {
  const v = raw.trim() === "" ? Number.NaN : Number(raw);
  if (!Number.isFinite(v) || !ok(v))
    throw new GenerateSettingsError(`${name}: expected ${expected}, got "${raw.slice(0, 40)}"`);
  return v;
}

const optional = (raw: string, read: (raw: string) => number): number | undefined =>
  raw.trim() === "" ? undefined : read(raw);

export interface RawGenerateSettings {
  readonly executor: string;
  readonly maxNewTokens: string;
  readonly temperature: string;
  readonly topK: string;
  readonly topP: string;
  readonly seed: string;
  readonly greedy: boolean;
}

/** The form's raw strings → settings; throws a GenerateSettingsError naming the first bad field. Empty top-k/top-p: off. */
export function parseGenerateSettings(raw: RawGenerateSettings): GenerateSettings {
  return {
    executor: raw.executor,
    maxNewTokens: field(
      "max new tokens",
      raw.maxNewTokens,
      (v) => Number.isInteger(v) && v >= 1 && v <= MAX_NEW_TOKENS,
      `an integer from 1 to ${MAX_NEW_TOKENS}`,
    ),
    temperature: field("temperature", raw.temperature, (v) => v >= 0, "a number >= 0 (0 is greedy)"),
    topK: optional(raw.topK, (s) =>
      field("top-k", s, (v) => Number.isInteger(v) && v >= 1, "an integer >= 1, or empty for all tokens"),
    ),
    topP: optional(raw.topP, (s) =>
      field("top-p", s, (v) => v > 0 && v <= 1, "a number in (0, 1], or empty for no cut"),
    ),
    seed: field("seed", raw.seed, (v) => Number.isInteger(v) && v >= 0 && v <= 0xffffffff, "an integer >= 0"),
    greedy: raw.greedy,
  };
}
