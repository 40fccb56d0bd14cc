// The training form's values, read and checked: the CLI's defaults (50 steps, lr 0.001, seed 3) and its bounds, with
// a message in words naming the field for a bad value.

export interface TrainSettings {
  readonly executor: string;
  readonly steps: number;
  readonly lr: number;
  readonly seed: number;
}

export const TRAIN_DEFAULTS: TrainSettings = { executor: "cpu", steps: 50, lr: 1e-3, seed: 3 };
/** More steps than this is a typo: the curve and the page would crawl. */
export const MAX_STEPS = 10_000;

export class TrainSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError"; // the errors view's "Bad config"
  }
}

function field(name: string, raw: string, ok: (v: number) => boolean, expected: string): number {
  const v = raw.trim() === "" ? Number.NaN : Number(raw);
  if (!Number.isFinite(v) || !ok(v))
    throw new TrainSettingsError(`${name}: expected ${expected}, got "${raw.slice(0, 40)}"`);
  return v;
}

/** The form's raw strings → settings; throws a TrainSettingsError naming the first bad field. */
export function parseTrainSettings(raw: {
  readonly executor: string;
  readonly steps: string;
  readonly lr: string;
  readonly seed: string;
}): TrainSettings {
  return {
    executor: raw.executor,
    steps: field(
      "steps",
      raw.steps,
      (v) => Number.isInteger(v) && v >= 1 && v <= MAX_STEPS,
      `an integer from 1 to ${MAX_STEPS}`,
    ),
    lr: field("lr", raw.lr, (v) => v > 0 && v < 10, "a number > 0 (and < 10)"),
    seed: field("seed", raw.seed, (v) => Number.isInteger(v) && v >= 0 && v <= 0xffffffff, "an integer >= 0"),
  };
}
