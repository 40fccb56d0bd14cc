// A torch.nn.MultiheadAttention loaded from its state_dict: run({ query, key, value, … }) as the module's forward,
// with PyTorch's mask conventions (torch-masks.ts) and its outputs (attn_output, attn_output_weights). One graph per
// combination of self-attention / masks / is_causal / need_weights a caller uses, compiled on first use.
import type { OpGraph } from "@attngraph/graph";
import { compile, type RunOptions, type Session } from "@attngraph/runtime";
import { formatShape, Tensor, type AnyTensor } from "@attngraph/tensor";
import { compileOptionsOf, type ModelCompileOptions } from "./gpt-model.js";
import type { MhaConfig } from "./mha-config.js";
import { mhaGraph, type MhaGraphOptions } from "./mha.js";
import { attnMask, keyPaddingMask } from "./torch-masks.js";
import { ModelInputError } from "./token-ids.js";

export interface MhaInputs {
  /** [B, L, E] with batch_first, else [L, B, E]. */
  readonly query: unknown;
  /** [B, S, kdim] / [S, B, kdim]. The same tensor object as query and value is self-attention (one packed matmul). */
  readonly key: unknown;
  /** [B, S, vdim] / [S, B, vdim]. */
  readonly value: unknown;
  /** [L, S]: bool (int32 or booleans; True = not allowed) or float additive. */
  readonly attn_mask?: unknown;
  /** [B, S]: bool/int (True / 1 = padded key) or float additive. */
  readonly key_padding_mask?: unknown;
  /** Return attn_output_weights (PyTorch's default true). */
  readonly need_weights?: boolean;
  /** Weights averaged over heads [B, L, S] (default true), else per head [B, H, L, S]. */
  readonly average_attn_weights?: boolean;
  /**
   * A causal mask (query i sees keys j <= i). PyTorch 2 takes it as a hint that attn_mask is causal and needs the
   * mask too; here it is the mask itself, and composes with an attn_mask by "or".
   */
  readonly is_causal?: boolean;
}

export interface MhaOutputs {
  /** Shaped like query. */
  readonly attn_output: Tensor;
  /** [B, L, S] averaged over heads, [B, H, L, S] per head, or null with need_weights false (PyTorch's None). */
  readonly attn_output_weights: Tensor | null;
}

export class MhaModel {
  readonly family = "torch-mha" as const;
  readonly config: MhaConfig;
  #weights: Record<string, Tensor>;
  readonly #options: ModelCompileOptions;
  readonly #sessions = new Map<OpGraph, Promise<Session>>();
  readonly #graphs = new Map<string, OpGraph>();

  constructor(config: MhaConfig, weights: Record<string, Tensor>, options: ModelCompileOptions) {
    this.config = config;
    this.#weights = weights;
    this.#options = options;
  }

  get description(): string {
    const c = this.config;
    const py = (v: boolean) => (v ? "True" : "False");
    return `torch.nn.MultiheadAttention(embed_dim=${c.embedDim}, num_heads=${c.numHeads}, bias=${py(c.bias)}, kdim=${c.kdim}, vdim=${c.vdim}, batch_first=${py(c.batchFirst)})`;
  }

  get weights(): Readonly<Record<string, Tensor>> {
    return this.#weights;
  }

  /** The module's graph for one combination of options (built once). */
  graph(options: MhaGraphOptions = {}): OpGraph {
    const o = options;
    const key = [o.selfAttention ? "self" : "-", o.mask ?? "-", o.keyPadding ? "pad" : "-", o.causal ? "causal" : "-", o.needWeights ? "w" : "-"].join("/");
    let g = this.#graphs.get(key);
    if (!g) this.#graphs.set(key, (g = mhaGraph(this.config, o)));
    return g;
  }

  /** The compiled session for one combination of options: tap `weights` [B, H, L, S] and the rest. */
  session(options: MhaGraphOptions = {}): Promise<Session> {
    return this.sessionOf(this.graph(options));
  }

  /** The compiled session of one of this model's graphs (prepare()'s): compiled on first use, then kept. */
  sessionOf(graph: OpGraph): Promise<Session> {
    let s = this.#sessions.get(graph);
    if (!s) {
      s = compile(graph, { ...compileOptionsOf(this.#options, "running the model"), weights: this.#weights });
      this.#sessions.set(graph, s);
      s.catch(() => this.#sessions.delete(graph)); // a failed compile is not kept: the next call tries again
    }
    return s;
  }

  /**
   * The graph a forward call runs and its inputs, PyTorch's masks turned into attngraph's, every shape checked before
   * anything runs: what run() feeds, and what a tool (a diff, an export) takes.
   */
  prepare(inputs: MhaInputs): { graph: OpGraph; inputs: Record<string, AnyTensor>; options: MhaGraphOptions } {
    const c = this.config;
    if (typeof inputs !== "object" || inputs === null) throw new ModelInputError("inputs", "not an inputs object", "{ query, key, value, attn_mask?, key_padding_mask? }", String(inputs));
    const layout = (len: string) => (c.batchFirst ? `[B, ${len}` : `[${len}, B`);
    const [B, L] = this.#checked("query", inputs.query, layout("L"), c.embedDim);
    const self = inputs.query === inputs.key && inputs.key === inputs.value;
    const o: { -readonly [K in keyof MhaGraphOptions]: MhaGraphOptions[K] } = { needWeights: inputs.need_weights ?? true };
    const feed: Record<string, AnyTensor> = { query: inputs.query as Tensor };
    let S = L;
    if (self) o.selfAttention = true;
    else {
      const [bk, sk] = this.#checked("key", inputs.key, layout("S"), c.kdim);
      const [bv, sv] = this.#checked("value", inputs.value, layout("S"), c.vdim);
      if (bk !== B || bv !== B) throw new ModelInputError(bk !== B ? "key" : "value", "batch must match the query's", `B = ${B}`, String(bk !== B ? bk : bv));
      if (sv !== sk) throw new ModelInputError("value", "key and value must have the same length S", `S = ${sk} (key's)`, String(sv));
      S = sk;
      feed["key"] = inputs.key as Tensor;
      feed["value"] = inputs.value as Tensor;
    }
    if (inputs.attn_mask !== undefined && inputs.attn_mask !== null) {
      const m = attnMask("attn_mask", inputs.attn_mask, L, S, "[L, S]");
      o.mask = m.kind;
      feed[m.kind === "mask" ? "attn_mask" : "attn_bias"] = m.tensor;
    }
    if (inputs.key_padding_mask !== undefined && inputs.key_padding_mask !== null) {
      o.keyPadding = true;
      feed["key_padding_mask"] = keyPaddingMask("key_padding_mask", inputs.key_padding_mask, B, S);
    }
    if (inputs.is_causal === true) o.causal = true;
    return { graph: this.graph(o), inputs: feed, options: o };
  }

  /** The module's forward: `attn_output` shaped like query and `attn_output_weights` (see MhaInputs). */
  async run(inputs: MhaInputs, options: RunOptions = {}): Promise<MhaOutputs> {
    const { graph, inputs: feed, options: o } = this.prepare(inputs);
    const out = await (await this.sessionOf(graph)).run(feed, options);
    const perHead = out["attn_output_weights"];
    // attngraph has no mean-over-an-axis op: the graph gives the weights per head and the average (PyTorch's default
    // average_attn_weights=True) is taken here, one pass over [B, H, L, S] on the host.
    const weights = perHead === undefined ? null : inputs.average_attn_weights === false ? perHead : meanOverHeads(perHead);
    return { attn_output: out["attn_output"]!, attn_output_weights: weights };
  }

  /** The weights as the module's state_dict (its own names), ready for writeSafetensors. */
  stateDict(): Map<string, Tensor> {
    return new Map(Object.entries(this.#weights));
  }

  async dispose(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map(async (s) => (await s.catch(() => undefined))?.dispose()));
  }

  /** A float32 rank-3 input of width `width`: its [B, length] in the module's layout, or a ModelInputError. */
  #checked(name: string, x: unknown, layout: string, width: number): [number, number] {
    const ok = Tensor.isTensor(x) && x.dtype === "float32" && x.shape.length === 3 && x.shape[2] === width;
    if (!ok) {
      const got = Tensor.isTensor(x) ? `${x.dtype} ${formatShape(x.shape)}` : x === undefined ? "none" : typeof x;
      throw new ModelInputError(name, `the module's ${name} input`, `a float32 tensor ${layout}, ${width}] (batch_first=${this.config.batchFirst ? "True" : "False"}; an unbatched 2-D input is not supported)`, got);
    }
    const s = (x as Tensor).shape;
    return this.config.batchFirst ? [s[0]!, s[1]!] : [s[1]!, s[0]!];
  }
}

/** [B, H, L, S] → [B, L, S], the mean over H. */
function meanOverHeads(w: Tensor): Tensor {
  const [B, H, L, S] = w.shape as [number, number, number, number];
  const src = w.contiguous().data as Float32Array;
  const out = new Float32Array(B * L * S);
  const plane = L * S;
  for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let i = 0; i < plane; i++) out[b * plane + i]! += src[(b * H + h) * plane + i]!;
  for (let i = 0; i < out.length; i++) out[i]! /= H;
  return Tensor.from(out, [B, L, S]);
}
