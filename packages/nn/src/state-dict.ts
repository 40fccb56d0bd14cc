// Weights by PyTorch `state_dict` names: a graph built by this package names its weights exactly as the module's
// state_dict does, so loading is a check, not a translation. The check reports everything at once (missing, unexpected
// and mis-shaped keys), as PyTorch's `load_state_dict(strict=True)` does, so a user fixes a checkpoint in one go.
import type { OpGraph } from "@attngraph/graph";
import { AttnGraphError, Tensor, clip, formatShape, type AnyTensor } from "@attngraph/tensor";

/** A tensor as JSON files write it (golden cases): row-major data and a shape. */
export interface TensorJSON {
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
}

/** What loadStateDict takes: tensors (or their JSON form) by state_dict key. */
export type StateDict = Readonly<Record<string, AnyTensor | TensorJSON>> | ReadonlyMap<string, AnyTensor | TensorJSON>;

/** A state_dict that does not fit a graph: every missing, unexpected and mis-shaped key, listed. */
export class StateDictError extends AttnGraphError {
  readonly missing: readonly string[];
  readonly unexpected: readonly string[];
  readonly misShaped: readonly { readonly key: string; readonly expected: string; readonly got: string }[];

  constructor(missing: string[], unexpected: string[], misShaped: { key: string; expected: string; got: string }[]) {
    const parts = [
      missing.length ? `missing ${list(missing)}` : "",
      unexpected.length ? `unexpected ${list(unexpected)}` : "",
      misShaped.length ? `wrong shape ${list(misShaped.map((m) => `${m.key} (expected ${m.expected}, got ${m.got})`))}` : "",
    ].filter(Boolean);
    super("state-dict", `state_dict does not fit the graph: ${parts.join("; ")}`, { subject: "state_dict" });
    this.name = "StateDictError";
    this.missing = missing;
    this.unexpected = unexpected;
    this.misShaped = misShaped;
  }
}

function list(items: readonly string[]): string {
  const shown = items.slice(0, 6).map((s) => clip(s, 80));
  return shown.join(", ") + (items.length > shown.length ? `, and ${items.length - shown.length} more` : "");
}

function isTensorJSON(v: unknown): v is TensorJSON {
  return typeof v === "object" && v !== null && Array.isArray((v as TensorJSON).shape) && typeof (v as TensorJSON).data === "object" && (v as TensorJSON).data !== null;
}

/**
 * The graph's weights from a state_dict: every weight the graph declares must be there with its declared shape, and
 * nothing else may be (`strict`, the default; `strict: false` ignores unexpected keys, as PyTorch's strict=False does).
 * JSON tensors become float32 Tensors. Anything that does not fit is one StateDictError listing every problem.
 */
export function loadStateDict(graph: OpGraph, stateDict: StateDict, options: { readonly strict?: boolean } = {}): Record<string, AnyTensor> {
  const entries: [string, unknown][] = stateDict instanceof Map ? [...stateDict.entries()] : Object.keys(stateDict).map((k) => [k, (stateDict as Record<string, unknown>)[k]]);
  const given = new Map(entries);
  const missing: string[] = [];
  const misShaped: { key: string; expected: string; got: string }[] = [];
  const out: Record<string, AnyTensor> = {};
  for (const w of graph.weights) {
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
    } else {
      misShaped.push({ key: w.name, expected: `a tensor ${formatShape(w.shape as number[])}`, got: v === null ? "null" : typeof v });
      continue;
    }
    const fits = t.shape.length === w.shape.length && w.shape.every((d, i) => typeof d === "string" || d === t.shape[i]);
    if (!fits) misShaped.push({ key: w.name, expected: formatShape(w.shape as number[]), got: formatShape(t.shape) });
    else Object.defineProperty(out, w.name, { value: t, enumerable: true, writable: true, configurable: true });
  }
  const declared = new Set(graph.weights.map((w) => w.name));
  const unexpected = options.strict === false ? [] : [...given.keys()].filter((k) => !declared.has(k));
  if (missing.length || unexpected.length || misShaped.length) throw new StateDictError(missing, unexpected, misShaped);
  return out;
}
