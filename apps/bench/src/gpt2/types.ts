// What `--problem gpt2` needs from an implementation: the model set up once (outside the timed region), then prompts
// and single tokens run on it; and, from nothing compiled, a short greedy generation with the time of each token.
import type { RowStatus, TimedRow } from "../results.js";
import type { Gpt2Problem } from "./problem.js";

/** prefill: the prompt's first T tokens from an empty cache; decode: one token after a cache of T positions. */
export type Gpt2Phase = "prefill" | "decode";

export interface Gpt2Case {
  readonly phase: Gpt2Phase;
  /** Prefill: the prompt's length; decode: the positions already cached. */
  readonly t: number;
}

export interface Gpt2Runner {
  readonly threads: number;
  readonly note?: string;
  /** The prompt's first t tokens from an empty cache; the last position's logits [V], read back. */
  prefill(t: number): Promise<Float32Array>;
  /** Untimed: make the cache hold the prompt's first `past` tokens, so that decode(past) can run (again and again). */
  preparePast(past: number): Promise<void>;
  /** The problem's token at position `past`, after preparePast(past); its logits [V], read back. */
  decode(past: number): Promise<Float32Array>;
  /** attngraph: the planned arena of the case's step (memoryPlan), bytes; undefined: n/a. */
  plannedPeakBytes?(c: Gpt2Case): number | undefined;
  dispose(): Promise<void>;
}

/** A greedy generation from nothing compiled: the tokens, and when each arrived (ms after the start). */
export interface Generation {
  readonly tokens: readonly number[];
  readonly atMs: readonly number[];
}

export interface Gpt2Impl {
  readonly name: string;
  readonly family: "attngraph" | "peer";
  /** Runs only when named in --impl. */
  readonly onlyWhenNamed?: boolean;
  setup(p: Gpt2Problem, options: { readonly threads: number }): Promise<Gpt2Runner>;
  /**
   * From the weights (attngraph: the state_dict's tensors; onnxruntime: the model's bytes) in memory to `count` greedy
   * tokens after the prompt's first `promptLength`: compile, prefill, then one token at a time, each fed back.
   */
  generate(
    p: Gpt2Problem,
    options: { readonly threads: number },
    promptLength: number,
    count: number,
  ): Promise<Generation>;
}

/** One timed row of `--problem gpt2`. */
export interface Gpt2Row extends TimedRow {
  readonly problem: "gpt2";
  readonly phase: Gpt2Phase;
  /** Tokens per second at the median: T / median for a prefill, 1 / median for a decode step. */
  readonly tokensPerS: number | null;
  /** Time of the very first run after setup (ms): a cold run. */
  readonly firstRunMs: number | null;
  /** Setup (compile / session creation) in ms, once per implementation (the same on each of its rows). */
  readonly setupMs: number | null;
  /** Resident memory the implementation added (RSS after its setup and first run, less before its setup), bytes. */
  readonly residentBytes: number | null;
  readonly plannedPeakBytes?: number | null;
  readonly status: RowStatus;
  readonly reason?: string;
  readonly reference?: string;
  readonly maxAbsDiff?: number;
  readonly relDiff?: number;
  readonly disagreesWith?: readonly string[];
  readonly note?: string;
}

/** The generation of one implementation: time to the first and to the last token (median over repeats). */
export interface Gpt2GenerationRow {
  readonly impl: string;
  readonly family: "attngraph" | "peer";
  readonly threads: number;
  readonly promptLength: number;
  readonly count: number;
  /** Per repeat: ms to the first token and to the last. */
  readonly firstTokenMs: readonly number[];
  readonly lastTokenMs: readonly number[];
  readonly medianFirstTokenMs: number | null;
  readonly medianLastTokenMs: number | null;
  readonly tokens: readonly number[];
  readonly status: "ok" | "differs" | "unavailable" | "failed";
  readonly reason?: string;
}
