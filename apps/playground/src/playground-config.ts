// What the form describes, as plain data: the builder's config (checked by normalizeConfig, so a bad value is the
// library's own ConfigError), the builder options, the input sizes, the seed and the executor. Pure: no DOM.
import type { AttentionOptions, PositionEncoding } from "@attngraph/attention";

export type PositionKind = "none" | "alibi" | "rope";

export interface PlaygroundConfig {
  /** The `config` object of `buildAttention` (and of the golden cases), unchecked: values come from the form as is. */
  readonly attention: Readonly<Record<string, unknown>>;
  readonly position: PositionKind;
  readonly fusedQkv: boolean;
  /** B, L (query length) and S (key length, cross-attention only). */
  readonly batch: number;
  readonly length: number;
  readonly kvLength: number;
  /** Seed of the random weights and inputs (when no loaded case fits). */
  readonly seed: number;
  readonly executor: string;
  /** The node clicked in the graph, whose tensor the tensor view shows. */
  readonly selected: string | undefined;
}

export const defaultConfig: PlaygroundConfig = {
  attention: {
    dIn: 8,
    dOut: 8,
    numHeads: 2,
    numKvHeads: 2,
    causal: true,
    window: null,
    scale: null,
    qkvBias: false,
    outProj: true,
    outBias: true,
    cross: false,
  },
  position: "none",
  fusedQkv: false,
  batch: 1,
  length: 8,
  kvLength: 8,
  seed: 1,
  executor: "cpu",
  selected: undefined,
};

export function positionOf(kind: PositionKind): PositionEncoding | undefined {
  return kind === "none" ? undefined : { kind };
}

/** The builder options for this config; `keyPaddingMask` when the inputs carry one (a loaded case). */
export function builderOptions(c: PlaygroundConfig, keyPaddingMask: boolean): AttentionOptions {
  const position = positionOf(c.position);
  return { fusedQkv: c.fusedQkv, keyPaddingMask, ...(position ? { position } : {}) };
}

/** A size field must be a whole number ≥ 1; said in the same words as the library's config errors. */
export function checkSizes(c: PlaygroundConfig): void {
  for (const [key, v] of [
    ["batch", c.batch],
    ["length", c.length],
    ["kvLength", c.kvLength],
    ["seed", c.seed],
  ] as const) {
    const min = key === "seed" ? 0 : 1;
    if (!Number.isSafeInteger(v) || v < min)
      throw new SizeError(
        `${key}: invalid value, expected an integer >= ${min}, got ${Number.isNaN(v) ? "nothing" : String(v)}`,
      );
    if (key !== "seed" && v > 256)
      throw new SizeError(`${key}: too large for the page, expected at most 256, got ${v}`);
  }
}

export class SizeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SizeError";
  }
}
