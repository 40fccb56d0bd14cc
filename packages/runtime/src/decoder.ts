// Incremental decoding: a session over a decode graph (buildAttention(config, { decode: true }), or any graph with
// kv-append nodes) that keeps each kv-append's cache on the executor between calls. Each call takes only the new
// tokens: the kv-append kernels write their keys and values at positions [P, P + T) of the preallocated caches and
// the attention reads all P + T. The decoder owns the caches and the dims of DECODE_DIMS, bound on every run: P (the
// cached positions), Q (positions a sliding window's full cache drops first), N (the absolute position, for RoPE).
import type { OpGraph } from "@attngraph/graph";
import { Tensor, type AnyTensor, type Shape } from "@attngraph/tensor";
import type { BufferPlan } from "@attngraph/scheduler";
import { checkInputs } from "./check-values.js";
import { compile, type CompileOptions } from "./compile.js";
import { CacheOverflowError, DecodeError } from "./decode-errors.js";
import { decodeLayout, type DecodeLayout, type DimSource } from "./decode-layout.js";
import { DEFAULT_MAX_ARENA_BYTES } from "./prepared.js";
import type { RunOptions, Session } from "./session.js";

export { CacheOverflowError, DecodeError } from "./decode-errors.js";

export interface DecoderOptions extends CompileOptions {
  /** Positions each cache holds (M): past plus new tokens may never exceed it (a CacheOverflowError says so). */
  readonly maxLength: number;
  /** The batch of every call; the caches are [batch, Hkv, maxLength, D]. Default 1. */
  readonly batch?: number;
}

/**
 * Compiles `graph` for decoding: the session gets, beside `options.weights`, a zero cache [batch, Hkv, maxLength, D]
 * for every kv-append, kept on its executor between calls.
 *
 * ```ts
 * const graph = buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { decode: true });
 * const decoder = await compileDecoder(graph, { executors: [createCpuExecutor()], weights, maxLength: 128 });
 * await decoder.step({ x: prompt });      // [1, T, 8]: the prompt's outputs; the cache holds T positions
 * await decoder.step({ x: nextToken });   // [1, 1, 8]: one more position, reading the T before it from the cache
 * ```
 */
export async function compileDecoder(graph: OpGraph, options: DecoderOptions): Promise<Decoder> {
  const { maxLength, batch = 1 } = options;
  if (!Number.isSafeInteger(maxLength) || maxLength < 1)
    throw new DecodeError("compileDecoder.maxLength", "invalid cache length", "an integer >= 1", String(maxLength));
  if (!Number.isSafeInteger(batch) || batch < 1)
    throw new DecodeError("compileDecoder.batch", "invalid batch", "an integer >= 1", String(batch));
  const layout = decodeLayout(graph);
  const weights: Record<string, AnyTensor> = { ...(options.weights ?? {}) };
  for (const [name, shape] of layout.caches) {
    if (Object.hasOwn(weights, name))
      throw new DecodeError(
        `weights.${name}`,
        "a cache is the decoder's own state",
        "no weight under this name",
        "a tensor",
      );
    const [b, , m] = shape;
    if (typeof b === "number" && b !== batch)
      throw new DecodeError(name, "the graph fixes the cache's batch", `batch ${b}`, `batch ${batch}`);
    if (typeof m === "number" && m !== maxLength)
      throw new DecodeError(name, "the graph fixes the cache's length", `maxLength ${m}`, `maxLength ${maxLength}`);
  }
  checkCacheBytes(layout, batch, maxLength, options.maxArenaBytes ?? DEFAULT_MAX_ARENA_BYTES);
  Object.assign(weights, zeroCaches(layout, batch, maxLength));
  const session = await compile(graph, { ...options, weights });
  return new Decoder(session, layout, maxLength, batch);
}

/**
 * The caches' memory against the session's limit, before any is allocated: each cache is one value on its executor, so
 * it must fit maxArenaBytes like any value (and a JS typed array: 2^31 − 1 float32 elements or fewer is safe anywhere).
 */
function checkCacheBytes(layout: DecodeLayout, batch: number, maxLength: number, limit: number): void {
  for (const [name, shape] of layout.caches) {
    const elements = batch * (shape[1] as number) * maxLength * (shape[3] as number);
    const bytes = elements * 4;
    if (bytes > limit || elements > 2 ** 31 - 1) {
      throw new DecodeError(
        `compileDecoder.maxLength`,
        `the cache ${name} [${batch}, ${shape[1]}, ${maxLength}, ${shape[3]}] (float32) needs ${bytes} bytes`,
        `<= ${Math.min(limit, (2 ** 31 - 1) * 4)} bytes (compile's maxArenaBytes ${limit}; a smaller maxLength or batch)`,
        `${bytes} bytes`,
        "memory-limit",
      );
    }
  }
}

/** Every cache of the layout zeroed, [batch, Hkv, maxLength, D] (Hkv and D are numbers: decodeLayout checks). */
function zeroCaches(layout: DecodeLayout, batch: number, maxLength: number): Record<string, Tensor> {
  const caches: Record<string, Tensor> = {};
  for (const [name, shape] of layout.caches)
    caches[name] = Tensor.zeros([batch, shape[1] as number, maxLength, shape[3] as number]);
  return caches;
}

/**
 * A decode session: `step()` runs the new tokens against everything cached so far. Calls run one after another (each
 * starts from the cache the one before it left). The caches are nodes like any other: `decoder.session.tap("k.cache")`
 * gives the keys of all P + T positions on every call.
 */
export class Decoder {
  readonly session: Session;
  readonly maxLength: number;
  readonly batch: number;
  readonly #layout: DecodeLayout;
  /** Positions in the caches (P). */
  #cached = 0;
  /** Positions in the sequence (N for the next token); more than #cached once a window's ring dropped some. */
  #position = 0;
  /** Steps called and not yet settled (queued behind another, or running): truncate and reset wait for none. */
  #pending = 0;
  #turn: Promise<unknown> = Promise.resolve();
  /** Why the caches no longer match the counts (a failed ring step), so step() refuses until a reset; else undefined. */
  #interrupted: string | undefined;
  /** A step failed since the caches were made: the next reset makes them anew (an executor may have lost them). */
  #failed = false;

  constructor(session: Session, layout: DecodeLayout, maxLength: number, batch: number) {
    this.session = session;
    this.#layout = layout;
    this.maxLength = maxLength;
    this.batch = batch;
  }

  /** Positions in the sequence: the tokens of every call since the last reset (or truncate). */
  get length(): number {
    return this.#position;
  }

  /**
   * Positions the caches hold: `length`, until a sliding window's full cache drops the positions no later query can
   * see (its ring: the last w − 1 move to the front when the next step would not fit, so decoding goes on without end).
   */
  get cached(): number {
    return this.#cached;
  }

  /**
   * Runs `inputs` (the new tokens only) after the cached positions and resolves to the graph's outputs for them. A
   * failed or cancelled call leaves the positions before it as they were, so decoding can go on, except:
   * - a failed or cancelled step that had to move a window's ring (its cache was full): whether the move happened is
   *   not known, so every step is a DecodeError until `reset()`;
   * - an executor that lost its memory in the failure (a wasm trap, a WebGPU device loss): the caches' contents died
   *   with it, and the next step fails there; `reset()` makes the caches anew.
   */
  step(
    inputs: Readonly<Record<string, AnyTensor>>,
    options: Omit<RunOptions, "dims"> = {},
  ): Promise<Record<string, Tensor>> {
    // Counted from the call, not from when its turn comes: a reset() or truncate() between a step's call and its turn
    // would otherwise run first, and the step would compute without its prefix.
    this.#pending++;
    const run = this.#turn.then(() => this.#step(inputs, options)).finally(() => void this.#pending--);
    this.#turn = run.catch(() => undefined);
    return run;
  }

  async #step(
    inputs: Readonly<Record<string, AnyTensor>>,
    options: Omit<RunOptions, "dims">,
  ): Promise<Record<string, Tensor>> {
    if (this.#interrupted !== undefined)
      throw new DecodeError("decoder", this.#interrupted, "reset() (or truncate(0)) first: a new sequence", "a step");
    const shapes = Object.fromEntries([...checkInputs(this.session.graph, inputs)].map(([name, t]) => [name, t.shape]));
    const { dims, past, added, shift } = this.#next(shapes);
    try {
      const outputs = await this.session.run(inputs, { ...options, dims });
      this.#cached = past + added;
      this.#position += added;
      return outputs;
    } catch (e) {
      this.#failed = true;
      // kv-append moves the kept positions down over the ones it drops: run again from the counts, it would move
      // positions that already moved. Whether this step's append ran before the failure is not known.
      if (shift > 0)
        this.#interrupted = `a step that moved the window's ring (dropping ${shift} positions) failed, so the caches' positions are unknown`;
      throw e;
    }
  }

  /**
   * The buffer plan of the next step with inputs of these shapes (the memory its arenas take, `peakBytes`), at the
   * decoder's current length. Throws what that step would: another batch, an overflow.
   */
  memoryPlan(inputShapes: Readonly<Record<string, Shape>>): BufferPlan {
    return this.session.memoryPlan(inputShapes, this.#next(inputShapes).dims);
  }

  /** What the next step with inputs of these shapes binds: P (after a window's ring, if it must drop), Q, N. */
  #next(shapes: Readonly<Record<string, Shape>>): {
    dims: Record<string, number>;
    past: number;
    added: number;
    shift: number;
  } {
    const { newTokens, batch, caches, pastDim, shiftDim, positionDim, ringKeep } = this.#layout;
    const read = (s: DimSource, what: string): number => {
      const shape = Object.hasOwn(shapes, s.input) ? shapes[s.input] : undefined;
      if (shape === undefined)
        throw new DecodeError(`input ${s.input}`, `missing input (it carries the ${what})`, "a tensor", "nothing");
      return shape[s.axis]!;
    };
    if (batch) {
      const b = read(batch, "batch");
      if (b !== this.batch)
        throw new DecodeError(
          `input ${batch.input}`,
          `the batch differs from the cache's (dim ${batch.axis})`,
          `batch ${this.batch} (compileDecoder's batch)`,
          `batch ${b}`,
        );
    }
    const added = typeof newTokens === "number" ? newTokens : read(newTokens, "new tokens");
    if (added < 1)
      throw new DecodeError(
        typeof newTokens === "number" ? "graph" : `input ${newTokens.input}`,
        "a step needs at least one new token",
        ">= 1",
        String(added),
      );
    const cache = caches.keys().next().value!;
    let past = this.#cached;
    let shift = 0;
    if (past + added > this.maxLength) {
      if (ringKeep === undefined) throw new CacheOverflowError(cache, past, added, this.maxLength);
      // The ring: only the last w − 1 positions can still be seen by a query; they move to the front in this step.
      const keep = Math.min(ringKeep, past);
      if (keep + added > this.maxLength) throw new CacheOverflowError(cache, keep, added, this.maxLength, true);
      shift = past - keep;
      past = keep;
    }
    const dims: Record<string, number> = { [pastDim]: past };
    if (shiftDim !== undefined) dims[shiftDim] = shift;
    if (positionDim !== undefined) dims[positionDim] = this.#position;
    return { dims, past, added, shift };
  }

  /** Forgets every cached position: the next step starts a new sequence. */
  reset(): void {
    this.truncate(0);
  }

  /**
   * Keeps the first `n` positions of the sequence (n <= length): the next step continues after them (rejecting a
   * draft's tokens). Positions a window's ring already dropped cannot come back: n must be >= length − cached, or 0.
   */
  truncate(n: number): void {
    if (this.#pending > 0) {
      const what = `${this.#pending} step${this.#pending === 1 ? "" : "s"} not yet settled`;
      throw new DecodeError(
        "decoder",
        "a step is queued or running; truncate or reset after it settles (await it)",
        "no step in flight",
        what,
        "decode-busy",
      );
    }
    const oldest = this.#position - this.#cached;
    if (n === 0) {
      if (this.#failed) this.#renewCaches(); // first: on a disposed session it throws with nothing changed
      this.#cached = this.#position = 0;
      this.#interrupted = undefined;
      return;
    }
    if (this.#interrupted !== undefined)
      throw new DecodeError("truncate(n)", this.#interrupted, "0 (a new sequence)", String(n));
    if (!Number.isSafeInteger(n) || n < oldest || n > this.#position) {
      const range =
        oldest === 0
          ? `an integer in 0..${this.#position}`
          : `0, or an integer in ${oldest}..${this.#position} (the window's ring dropped the positions before ${oldest})`;
      throw new DecodeError("truncate(n)", "invalid sequence length", range, String(n));
    }
    this.#cached -= this.#position - n;
    this.#position = n;
  }

  /**
   * New zeroed caches for the session (uploaded on the next step), after a failed step: an executor that lost its
   * memory (a trap, a device loss) lost the caches' contents with it, and a weight written in place is not restored.
   */
  #renewCaches(): void {
    this.session.setWeights(zeroCaches(this.#layout, this.batch, this.maxLength));
    this.#failed = false;
  }

  dispose(): Promise<void> {
    return this.session.dispose();
  }
}
