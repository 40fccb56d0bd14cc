// The decode structure of a graph, read once at compileDecoder: its kv-append nodes, their caches, the dims the
// decoder binds (P, Q, N) and where a call's new-token count and batch are found among its inputs.
import { DECODE_DIMS, type OpGraph, type SymShape } from "@attngraph/graph";
import { DecodeError } from "./decode-errors.js";

/** Where a symbolic dim of the graph's inputs can be read from a call's inputs: input name and axis. */
export interface DimSource {
  readonly input: string;
  readonly axis: number;
}

export interface DecodeLayout {
  /** The dim name every kv-append's `past` uses (`P`). */
  readonly pastDim: string;
  /** The dim name of the kv-appends' `shift` (`Q`); undefined when fixed at 0 (no ring). */
  readonly shiftDim: string | undefined;
  /** The absolute-position dim (`N`) when a node names it (RoPE's offset), else undefined. */
  readonly positionDim: string | undefined;
  /**
   * With a sliding window on every attention (every mask and fused attention node), the positions a full cache keeps
   * (w − 1: all a later query can see); undefined when some attention sees the whole past (no ring possible).
   */
  readonly ringKeep: number | undefined;
  /** Cache weights by name, with their declared shapes. */
  readonly caches: ReadonlyMap<string, SymShape>;
  /** The new tokens per call: a fixed count, or where to read it. */
  readonly newTokens: number | DimSource;
  /** Where the batch of a call is (the caches' dim 0), when it is symbolic. */
  readonly batch: DimSource | undefined;
}

function sourceOf(graph: OpGraph, dim: string): DimSource | undefined {
  for (const v of graph.inputs) {
    const axis = v.shape.indexOf(dim);
    if (axis >= 0) return { input: v.name, axis };
  }
  return undefined;
}

/** Reads the decode structure off the graph: its kv-append nodes, their caches and dims. */
export function decodeLayout(graph: OpGraph): DecodeLayout {
  const appends = graph.nodes.filter((n) => n.kind === "kv-append");
  if (appends.length === 0) {
    throw new DecodeError(
      "graph",
      "no kv-append node: nothing to cache between calls",
      "a decode graph (buildAttention(config, { decode: true }))",
      "a graph without kv-append",
    );
  }
  const caches = new Map<string, SymShape>();
  let pastDim: string | undefined;
  let newTokens: number | DimSource | undefined;
  for (const n of appends) {
    const cache = n.inputs["cache"]!;
    if (graph.roleOf(cache) !== "weight")
      throw new DecodeError(
        `${n.name}.cache`,
        "a kv-append's cache must be a weight the decoder allocates",
        "a weight",
        `a ${graph.roleOf(cache)}`,
      );
    const past = n.attrs["past"];
    if (typeof past !== "string")
      throw new DecodeError(
        `${n.name}.past`,
        "the past length must be a dim name the decoder binds",
        "a dim name",
        String(past),
      );
    if (pastDim !== undefined && past !== pastDim)
      throw new DecodeError(`${n.name}.past`, "every kv-append must share one past-length dim", pastDim, past);
    pastDim = past;
    const shape = graph.shapeOf(cache);
    if (typeof shape[1] !== "number" || typeof shape[3] !== "number")
      throw new DecodeError(
        cache,
        "the cache's Hkv and D must be fixed",
        "[B, Hkv, M, D] with numbers for Hkv and D",
        `[${shape.join(", ")}]`,
      );
    caches.set(cache, shape);
    const t = graph.shapeOf(n.inputs["x"]!)[2]!;
    const source = typeof t === "number" ? t : sourceOf(graph, t);
    if (source === undefined)
      throw new DecodeError(
        `${n.name}.x`,
        `the new-token dim ${t} is carried by no graph input`,
        "an input with that dim",
        "none",
      );
    newTokens ??= source;
  }
  const shifts = new Set(appends.map((n) => n.attrs["shift"]));
  const shift = shifts.size === 1 ? [...shifts][0] : undefined;
  if (shift !== undefined && typeof shift !== "string" && shift !== 0)
    throw new DecodeError(
      `${appends[0]!.name}.shift`,
      "a fixed shift has no meaning in a decode graph",
      "0 or a dim name",
      String(shift),
    );
  if (shifts.size > 1)
    throw new DecodeError(
      `${appends[0]!.name}.shift`,
      "every kv-append must share one shift dim",
      "one dim name",
      [...shifts].join(", "),
    );
  const windows = graph.nodes
    .filter((n) => n.kind === "mask" || n.kind === "attention")
    .map((n) => (n.attrs["causal"] === true ? n.attrs["window"] : null));
  const ringKeep =
    typeof shift === "string" && windows.length > 0 && windows.every((w) => typeof w === "number")
      ? Math.max(...(windows as number[])) - 1
      : undefined;
  const named = new Set<string>();
  for (const n of graph.nodes) {
    for (const [key, spec] of Object.entries(
      graph.registry.get(n.kind, n.name).attrs as Record<string, { type: string }>,
    )) {
      if (spec.type === "dim" && typeof n.attrs[key] === "string") named.add(n.attrs[key] as string);
    }
  }
  const b = caches.values().next().value![0]!;
  return {
    pastDim: pastDim!,
    shiftDim: typeof shift === "string" ? shift : undefined,
    positionDim: named.has(DECODE_DIMS.position) ? DECODE_DIMS.position : undefined,
    ringKeep,
    caches,
    newTokens: newTokens!,
    batch: typeof b === "string" ? sourceOf(graph, b) : undefined,
  };
}
