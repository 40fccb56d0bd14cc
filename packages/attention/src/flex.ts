// Attention variants as score and mask modifications (FlexAttention's score_mod and mask_mod, as data): the core from
// q, k, v in heads layout to the output, with a `score-mod` node (the scaled scores through an expression) and a
// `mask-mod` node (−∞ where an expression says a key is not seen) between `scores` and the softmax. The expressions may
// gather from tensors of their own (per-head slopes, a bias table, document ids), inputs of the graph.
import {
  GraphBuilder,
  gatheredInputs,
  MAX_GATHERED,
  type OpGraph,
  type OpRegistry,
  type Ref,
  type SymShape,
} from "@attngraph/graph";
import { ConfigError } from "./config.js";

export interface FlexAttentionSpec {
  readonly numHeads: number;
  /** Key/value heads (grouped-query attention); default numHeads. */
  readonly numKvHeads?: number;
  /** D, the head dim of queries and keys. */
  readonly headDim: number;
  /** The head dim of values; default headDim. */
  readonly valueDim?: number;
  /** The score scale; null or absent: 1/√D. */
  readonly scale?: number | null;
  /** A score modification (golden-flex FORMAT.md), or null. */
  readonly scoreMod?: unknown;
  /** A mask modification, or null. */
  readonly maskMod?: unknown;
  /** The tensors the expressions gather from, by name, with their shapes: inputs of the graph under these names. */
  readonly gathered?: Readonly<Record<string, SymShape>>;
  readonly registry?: OpRegistry;
}

export interface FlexRefs {
  readonly scores: Ref;
  /** The scores after the score modification (the scaled scores without one). */
  readonly modified: Ref | undefined;
  readonly masked: Ref | undefined;
  readonly weights: Ref;
  readonly output: Ref;
}

/**
 * Adds score → [score-mod] → [mask-mod] → softmax → weighted-sum reading q [B, H, L, D], k [B, Hkv, S, D] and
 * v [B, Hkv, S, Dv]; `gathered` are the refs of the expressions' tensors by name (the names the expressions use).
 * Nodes: `scores`, `scores.mod`, `masked`, `weights`, and `output` (or `outputName`).
 */
export function addFlexAttention(
  b: GraphBuilder,
  refs: { readonly q: Ref; readonly k: Ref; readonly v: Ref; readonly gathered?: Readonly<Record<string, Ref>> },
  spec: { readonly scale: number; readonly scoreMod?: unknown; readonly maskMod?: unknown },
  options: { readonly prefix?: string; readonly outputName?: string } = {},
): FlexRefs {
  const name = (n: string) => (options.prefix ? `${options.prefix}.${n}` : n);
  const gathered = Object.entries(refs.gathered ?? {});
  if (gathered.length > MAX_GATHERED - 1)
    throw new ConfigError(
      "gathered",
      "too many gathered inputs",
      `at most ${MAX_GATHERED - 1} (the backward gathers one more)`,
      String(gathered.length),
    );
  const has = (e: unknown) => e !== undefined && e !== null;
  // Each node gathers what its expression reads (an unread input would only be a dependency).
  const reading = (e: unknown) => {
    const read = readNames(e);
    const used = gathered.filter(([n]) => read.has(n));
    return { slots: gatheredInputs(used.map(([, r]) => r)), inputs: used.map(([n]) => n) };
  };
  const scores = b.add("score", name("scores"), { q: refs.q, k: refs.k }); // [B, H, L, S], raw
  // With a score modification the scale is applied before it (its `score` is the scaled score), so the softmax gets 1.
  const sm = reading(spec.scoreMod);
  const mm = reading(spec.maskMod);
  const modified = has(spec.scoreMod)
    ? b.add(
        "score-mod",
        name("scores.mod"),
        { x: scores, ...sm.slots },
        { scale: spec.scale, expr: spec.scoreMod, inputs: sm.inputs },
      )
    : undefined;
  const masked = has(spec.maskMod)
    ? b.add(
        "mask-mod",
        name("masked"),
        { x: modified ?? scores, ...mm.slots },
        { expr: spec.maskMod, inputs: mm.inputs },
      )
    : undefined;
  const weights = b.add(
    "softmax",
    name("weights"),
    { x: masked ?? modified ?? scores },
    { scale: modified ? 1 : spec.scale },
  );
  const output = b.add("weighted-sum", options.outputName ?? name("output"), { weights, v: refs.v });
  return { scores, modified, masked, weights, output };
}

/**
 * The attention core of a variant as a graph: inputs `q` [B, H, L, D], `k` [B, Hkv, S, D], `v` [B, Hkv, S, Dv] and
 * each gathered tensor; output `output` [B, H, L, Dv] (golden-flex's cases).
 */
export function flexAttention(spec: FlexAttentionSpec): OpGraph {
  const H = spec.numHeads;
  const Hkv = spec.numKvHeads ?? H;
  for (const [key, v] of [
    ["numHeads", H],
    ["numKvHeads", Hkv],
    ["headDim", spec.headDim],
    ["valueDim", spec.valueDim ?? spec.headDim],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1)
      throw new ConfigError(key, "must be a positive integer", "an integer >= 1", String(v));
  }
  if (H % Hkv !== 0) throw new ConfigError("numKvHeads", "must divide numHeads", `a divisor of ${H}`, String(Hkv));
  const scale = spec.scale ?? 1 / Math.sqrt(spec.headDim);
  if (typeof scale !== "number" || !Number.isFinite(scale))
    throw new ConfigError("scale", "must be a finite number or null", "a number or null (1/√D)", String(spec.scale));
  const b = new GraphBuilder(spec.registry ? { registry: spec.registry } : {});
  const q = b.input("q", ["B", H, "L", spec.headDim]);
  const k = b.input("k", ["B", Hkv, "S", spec.headDim]);
  const v = b.input("v", ["B", Hkv, "S", spec.valueDim ?? spec.headDim]);
  const gathered: Record<string, Ref> = {};
  for (const [n, shape] of Object.entries(spec.gathered ?? {})) {
    if (n === "q" || n === "k" || n === "v")
      throw new ConfigError(
        `gathered.${n}`,
        "a gathered input cannot be named like the core's inputs",
        "a name other than q, k, v",
        n,
      );
    gathered[n] = b.input(n, shape);
  }
  const refs = addFlexAttention(b, { q, k, v, gathered }, { scale, scoreMod: spec.scoreMod, maskMod: spec.maskMod });
  return b.output(refs.output).build();
}

/**
 * The names an expression (as the caller wrote it, not yet checked) gathers from: every `{ op: "input", name }`. The
 * node's own check then reports anything malformed, naming the node and the sub-expression.
 */
function readNames(e: unknown): Set<string> {
  const out = new Set<string>();
  let budget = 10_000; // a hostile expression reached through shared subtrees is refused by the node's check anyway
  const walk = (x: unknown, depth: number): void => {
    if (--budget < 0 || depth > 256 || typeof x !== "object" || x === null) return;
    const o = x as Record<string, unknown>;
    if (o["op"] === "input" && typeof o["name"] === "string") out.add(o["name"]);
    for (const k of ["args", "index"]) {
      const list = o[k];
      if (Array.isArray(list)) for (const y of list) walk(y, depth + 1);
    }
  };
  walk(e, 0);
  return out;
}
