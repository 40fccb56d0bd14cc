// Weights by PyTorch `state_dict` names: a graph built by this package names its weights exactly as the module's
// state_dict does, so loading is a check, not a translation. The check reports everything at once (missing, unexpected
// and mis-shaped keys, bad values), as PyTorch's `load_state_dict(strict=True)` does, so a user fixes a checkpoint in
// one go. A decode graph's kv-append caches are weights too, but they are the decode session's own state (compileDecoder
// allocates them and refuses them as weights), never a checkpoint's: so the full model's state_dict loads into its
// decode graph unchanged.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { AttnGraphError, Tensor, clip, formatShape, type AnyTensor } from "@attngraph/tensor";
import { checkGraph, checkOptions, kindOf } from "./args.js";
import { FLOAT32_ELEMENT, firstBadElement, isTensorJSON, type TensorJSON } from "./tensor-json.js";

export type { TensorJSON } from "./tensor-json.js";

/** What loadStateDict takes: tensors (or their JSON form) by state_dict key. */
export type StateDict = Readonly<Record<string, AnyTensor | TensorJSON>> | ReadonlyMap<string, AnyTensor | TensorJSON>;

/** A JSON tensor's element that is not a float32 number: the first one of its tensor. */
export interface BadValue {
  readonly key: string;
  readonly index: number;
  readonly expected: string;
  readonly got: string;
}

/** A state_dict that does not fit a graph: every missing, unexpected and mis-shaped key, listed. */
export class StateDictError extends AttnGraphError {
  readonly missing: readonly string[];
  readonly unexpected: readonly string[];
  readonly misShaped: readonly { readonly key: string; readonly expected: string; readonly got: string }[];
  /** JSON tensors with an element that is not a float32 number ("abc", null, 1e39): the first such element of each. */
  readonly badValues: readonly BadValue[];

  /** What the loader assumed the checkpoint to be (a family and layout), when one chose: said first in the message. */
  readonly assumed: string | undefined;

  constructor(
    missing: string[],
    unexpected: string[],
    misShaped: { key: string; expected: string; got: string }[],
    badValues: BadValue[] = [],
    assumed?: string,
  ) {
    const parts = [
      missing.length ? `missing ${list(missing)}` : "",
      unexpected.length ? `unexpected ${list(unexpected)}` : "",
      misShaped.length
        ? `wrong shape ${list(misShaped.map((m) => `${m.key} (expected ${m.expected}, got ${m.got})`))}`
        : "",
      // Every bad value expects the same (FLOAT32_ELEMENT): said once, so each item has room for the key, index and got.
      badValues.length
        ? `bad values (expected finite float32 numbers): ${list(badValues.map((b) => `${b.got} at ${b.key}[${b.index}]`))}`
        : "",
    ].filter(Boolean);
    super("state-dict", `state_dict does not fit ${assumed ?? "the graph"}: ${parts.join("; ")}`, {
      subject: "state_dict",
    });
    this.assumed = assumed;
    this.name = "StateDictError";
    this.missing = missing;
    this.unexpected = unexpected;
    this.misShaped = misShaped;
    this.badValues = badValues;
  }
}

/**
 * Every item: a checkpoint is fixed in one go only when every key is named (a GPT-2 with one renamed block misses a
 * dozen). Each is clipped, and a list past 200 items says how many more, so a wrong file cannot make a 10 MB message.
 */
function list(items: readonly string[]): string {
  const shown = items.slice(0, 200).map((s) => clip(s, 80));
  return shown.join(", ") + (items.length > shown.length ? `, and ${items.length - shown.length} more` : "");
}

/**
 * The graph's weights from a state_dict: every weight the graph declares must be there with its declared shape, and
 * nothing else may be (`strict`, the default; `strict: false` ignores unexpected keys, as PyTorch's strict=False does).
 * The state_dict is an object or a Map (what readSafetensors returns) of tensors by key. JSON tensors become float32
 * Tensors; each element must be a number that float32 holds. Anything that does not fit is one StateDictError
 * listing every problem; a graph, state_dict or options of the wrong kind is a GraphValidationError naming it.
 * A weight that is a kv-append node's `cache` (a decode graph's, `decode: true`) is not expected: the decoder owns it,
 * and under strict a key by its name is unexpected, like any other key the checkpoint should not hold.
 */
export function loadStateDict(
  graph: OpGraph,
  stateDict: StateDict,
  options: { readonly strict?: boolean } = {},
): Record<string, AnyTensor> {
  checkGraph("loadStateDict graph", graph);
  checkOptions("loadStateDict options", options, "{ strict?: boolean }");
  const strict = options.strict ?? true;
  if (typeof strict !== "boolean")
    throw new GraphValidationError(
      "loadStateDict options.strict",
      "must be true or false",
      "a boolean",
      kindOf(strict),
    );
  const given = new Map(entriesOf(stateDict));
  const missing: string[] = [];
  const misShaped: { key: string; expected: string; got: string }[] = [];
  const badValues: BadValue[] = [];
  const out: Record<string, AnyTensor> = {};
  const caches = decoderState(graph);
  const loaded = graph.weights.filter((w) => !caches.has(w.name));
  for (const w of loaded) {
    if (!given.has(w.name)) {
      missing.push(w.name);
      continue;
    }
    const v = given.get(w.name);
    let t: AnyTensor;
    if (Tensor.isTensor(v)) t = v;
    else if (isTensorJSON(v)) {
      try {
        t = Tensor.from(v.data, v.shape);
      } catch (e) {
        misShaped.push({ key: w.name, expected: formatShape(w.shape as number[]), got: (e as Error).message });
        continue;
      }
      // After Tensor.from, so data.length is known to be the shape's size (not a bogus length to loop over).
      const bad = firstBadElement(v.data);
      if (bad) badValues.push({ key: w.name, index: bad.index, expected: FLOAT32_ELEMENT, got: bad.got });
    } else {
      misShaped.push({
        key: w.name,
        expected: `a tensor ${formatShape(w.shape as number[])}`,
        got:
          v === null
            ? "null"
            : typeof v === "object"
              ? "an object that is neither a Tensor nor { shape, data }"
              : typeof v,
      });
      continue;
    }
    const fits =
      t.shape.length === w.shape.length && w.shape.every((d, i) => typeof d === "string" || d === t.shape[i]);
    if (!fits) misShaped.push({ key: w.name, expected: formatShape(w.shape as number[]), got: formatShape(t.shape) });
    else Object.defineProperty(out, w.name, { value: t, enumerable: true, writable: true, configurable: true });
  }
  const declared = new Set(loaded.map((w) => w.name));
  const unexpected = strict ? [...given.keys()].filter((k) => !declared.has(k)) : [];
  if (missing.length || unexpected.length || misShaped.length || badValues.length)
    throw new StateDictError(missing, unexpected, misShaped, badValues);
  return out;
}

/** The weights a decode session allocates itself: every kv-append node's `cache` input that is a weight. */
function decoderState(graph: OpGraph): Set<string> {
  const caches = new Set<string>();
  for (const n of graph.nodes) {
    const cache = n.kind === "kv-append" ? n.inputs["cache"] : undefined;
    if (cache !== undefined && graph.roleOf(cache) === "weight") caches.add(cache);
  }
  return caches;
}

/** The state_dict's (key, value) pairs: a Map's entries or an object's own keys (never an inherited "constructor"). */
function entriesOf(stateDict: unknown): [string, unknown][] {
  if (stateDict instanceof Map) {
    const odd = [...stateDict.keys()].filter((k) => typeof k !== "string");
    if (odd.length)
      throw new GraphValidationError(
        "loadStateDict stateDict",
        "a Map's keys must be state_dict names",
        "string keys",
        kindOf(odd[0]),
      );
    return [...stateDict.entries()] as [string, unknown][];
  }
  if (typeof stateDict !== "object" || stateDict === null || Array.isArray(stateDict)) {
    throw new GraphValidationError(
      "loadStateDict stateDict",
      "not a state_dict",
      "an object or Map of tensors by state_dict key",
      kindOf(stateDict),
    );
  }
  return Object.keys(stateDict).map((k) => [k, (stateDict as Record<string, unknown>)[k]]);
}
