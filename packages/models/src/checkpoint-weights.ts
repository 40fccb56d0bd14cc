// A graph's weights out of a checkpoint that uses its family's names and layouts: each graph weight has a key in the
// file (renamed), maybe stored transposed (Conv1D). Everything that does not fit is reported at once, by the file's
// own key names, with the family and layout the loader assumed — a user fixes a checkpoint in one go.
import type { OpGraph } from "@attngraph/graph";
import { StateDictError } from "@attngraph/nn";
import { type Tensor, formatShape, type AnyTensor } from "@attngraph/tensor";
import { transposed } from "./state-dict-input.js";

export interface KeyMapping {
  /** The file key of a graph weight. */
  readonly keyOf: (name: string) => string;
  /** Whether the file stores this graph weight [in, out] (Conv1D), to be transposed to nn.Linear's [out, in]. */
  readonly transposedInFile?: (name: string) => boolean;
  /** File keys that are not weights of the graph and may be there (buffers, a tied head's second name). */
  readonly ignorable?: (key: string) => boolean;
  /** "nanoGPT (nanoGPT layout …)": said first in an error. */
  readonly assumed: string;
}

/** The graph's weights by its own names (a decode graph's caches left to the decoder), or one StateDictError. */
export function weightsFrom(graph: OpGraph, sd: ReadonlyMap<string, AnyTensor>, m: KeyMapping): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  const used = new Set<string>();
  const missing: string[] = [];
  const misShaped: { key: string; expected: string; got: string }[] = [];
  for (const w of graph.weights) {
    if (isDecoderState(graph, w.name)) continue;
    const key = m.keyOf(w.name);
    const t = sd.get(key);
    const flip = m.transposedInFile?.(w.name) ?? false;
    const want = (flip ? [w.shape[1], w.shape[0]] : w.shape) as number[];
    if (t === undefined) {
      missing.push(key);
      continue;
    }
    used.add(key);
    if (t.dtype !== "float32")
      misShaped.push({ key, expected: `float32 ${formatShape(want)}`, got: `${t.dtype} ${formatShape(t.shape)}` });
    else if (t.shape.length !== want.length || want.some((d, i) => d !== t.shape[i]))
      misShaped.push({ key, expected: formatShape(want), got: formatShape(t.shape) });
    else out[w.name] = flip ? transposed(t) : (t as Tensor);
  }
  const unexpected = [...sd.keys()].filter((k) => !used.has(k) && !(m.ignorable?.(k) ?? false));
  if (missing.length || unexpected.length || misShaped.length)
    throw new StateDictError(missing, unexpected, misShaped, [], m.assumed);
  return out;
}

/** A kv-append's cache: state the decoder allocates and owns, never in a checkpoint. */
export function isDecoderState(graph: OpGraph, weight: string): boolean {
  return graph.nodes.some((n) => n.kind === "kv-append" && n.inputs["cache"] === weight);
}
