// What every model loaded here shares, whatever its family: its weights (by the graph's names), the graphs it runs as
// (one per combination of options a caller uses: a loss, a mask kind, self-attention…) built on first use, each
// compiled once into a session, new weights reaching every session, and one dispose for all of them.
import type { OpGraph } from "@attngraph/graph";
import { compile, type CompileOptions, type Session } from "@attngraph/runtime";
import type { AnyTensor, Tensor } from "@attngraph/tensor";
import { ModelConfigError } from "./config-fields.js";
import { ModelInputError } from "./token-ids.js";

/**
 * How a model's sessions compile: compile()'s options but the weights (the model's) and updates (a trainer's).
 * Executors may be left out for host-only use (graph(), prepare(), stateDict()); running then says they are needed.
 */
export type ModelCompileOptions = Omit<CompileOptions, "weights" | "updates" | "executors"> & {
  readonly executors?: CompileOptions["executors"];
};

/** The options compile() needs, or a ModelConfigError when the model was loaded without executors. */
export function compileOptionsOf(options: ModelCompileOptions, what: string): Omit<CompileOptions, "weights"> {
  if (!options.executors || options.executors.length === 0)
    throw new ModelConfigError(
      "options.executors",
      `${what} needs executors: loadModel(…, { executors: [createCpuExecutor()] })`,
      "one or more executors",
      "none",
    );
  return options as Omit<CompileOptions, "weights">;
}

/** Something a model holds that must be disposed with it (a session, a decoder). */
interface Disposable {
  dispose(): Promise<void>;
}

export abstract class LoadedModel<Config, GraphOptions extends object> {
  /** The family's config, as the loader read it from the checkpoint. */
  readonly config: Config;
  #weights: Record<string, Tensor>;
  protected readonly options: ModelCompileOptions;
  readonly #graphs = new Map<string, OpGraph>();
  readonly #sessions = new Map<OpGraph, Promise<Session>>();

  constructor(config: Config, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    this.config = config;
    this.#weights = weights;
    this.options = options;
  }

  /** The family's graph for these options. */
  protected abstract buildGraph(options: GraphOptions): OpGraph;
  /** The options' identity: graphs (and so sessions) are kept by it. */
  protected abstract graphKey(options: GraphOptions): string;

  /** The weights by the graph's names. */
  get weights(): Readonly<Record<string, Tensor>> {
    return this.#weights;
  }

  /** The model's graph for these options (built once). */
  graph(options: GraphOptions = {} as GraphOptions): OpGraph {
    const key = this.graphKey(options);
    let g = this.#graphs.get(key);
    if (!g) this.#graphs.set(key, (g = this.buildGraph(options)));
    return g;
  }

  /** The compiled session for these options: tap any node of it. Compiled once. */
  session(options: GraphOptions = {} as GraphOptions): Promise<Session> {
    return this.sessionOf(this.graph(options));
  }

  /** The compiled session of one of this model's graphs (prepare()'s): compiled on first use, then kept. */
  sessionOf(graph: OpGraph): Promise<Session> {
    let s = this.#sessions.get(graph);
    if (!s) {
      s = compile(graph, { ...compileOptionsOf(this.options, "running the model"), weights: this.#weights });
      this.#sessions.set(graph, s);
      s.catch(() => this.#sessions.delete(graph)); // a failed compile is not kept: the next call tries again
    }
    return s;
  }

  /** The weights as the module's state_dict, ready for writeSafetensors (the graph's names are the file's here). */
  stateDict(): Map<string, Tensor> {
    return new Map(Object.entries(this.#weights));
  }

  /**
   * New weights by the graph's names (trained ones: `trainer.parameters()`, whose optimizer state is left out), for
   * every session from its next run on. Every model weight must be there, float32.
   */
  async setWeights(weights: ReadonlyMap<string, AnyTensor> | Readonly<Record<string, AnyTensor>>): Promise<void> {
    const get = (name: string) =>
      weights instanceof Map ? weights.get(name) : (weights as Record<string, AnyTensor>)[name];
    const next: Record<string, Tensor> = {};
    for (const name of Object.keys(this.#weights)) {
      const t = get(name);
      if (t === undefined || t.dtype !== "float32")
        throw new ModelInputError(
          `weights.${name}`,
          "a weight of the model is missing or not float32",
          "a float32 tensor",
          t === undefined ? "nothing" : t.dtype,
        );
      next[name] = t as Tensor;
    }
    this.#weights = next;
    for (const s of this.#sessions.values()) (await s).setWeights(next);
    await this.weightsChanged(next);
  }

  /** What else holds the weights (a causal LM's decoders) takes the new ones. */
  protected async weightsChanged(_next: Record<string, Tensor>): Promise<void> {}

  /** Everything else the model holds and disposes with its sessions. */
  protected held(): Promise<Disposable>[] {
    return [];
  }

  async dispose(): Promise<void> {
    const held: Promise<Disposable>[] = [...this.#sessions.values(), ...this.held()];
    this.#sessions.clear();
    await Promise.all(held.map(async (s) => (await s.catch(() => undefined))?.dispose()));
  }
}
