// Checks of what a caller hands the runtime as tensors: run inputs and weights. Only own keys count (a weight named
// "constructor" or an input "__proto__" is a name like any other, never something inherited from Object.prototype),
// and a value is a Tensor only by its brand (`Tensor.isTensor`): an object that merely has a `shape` would otherwise
// reach an executor and fail there with an error that names neither the input nor what was wrong.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { formatShape, Tensor } from "@attngraph/tensor";

/** What a non-tensor is, for messages: "null", "an array", "an object with a shape but no Tensor brand", "number". */
function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "shape" in v ? "an object with a shape that is not a Tensor" : "an object that is not a Tensor";
  return typeof v;
}

function ownEntries(record: unknown, subject: string, what: string): [string, unknown][] {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    throw new GraphValidationError(subject, `invalid ${what}`, `an object of tensors by name`, kindOf(record));
  }
  return Object.keys(record).map((k) => [k, (record as Record<string, unknown>)[k]]);
}

/** A run's inputs by name; every value a Tensor. Unknown or missing names are the scheduler's to report (bind.ts). */
export function checkInputs(inputs: unknown): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [name, t] of ownEntries(inputs, "run inputs", "inputs")) {
    if (!Tensor.isTensor(t)) throw new GraphValidationError(`input ${name}`, "not a tensor", "a Tensor (@attngraph/tensor)", kindOf(t));
    out.set(name, t);
  }
  return out;
}

/**
 * Weights against the graph's declarations: every name declared (and, unless `partial`, every declaration given),
 * every value a Tensor of the declared shape (symbolic dims match any size).
 */
export function checkWeights(graph: OpGraph, weights: unknown, options: { readonly partial?: boolean } = {}): Map<string, Tensor> {
  const declared = new Map(graph.weights.map((w) => [w.name, w.shape] as const));
  const given = new Map(ownEntries(weights ?? {}, "weights", "weights"));
  const out = new Map<string, Tensor>();
  for (const [name, t] of given) {
    const shape = declared.get(name);
    if (!shape) throw new GraphValidationError(`weight ${name}`, "the graph declares no such weight", [...declared.keys()].join(", ") || "no weights", name);
    if (!Tensor.isTensor(t)) throw new GraphValidationError(`weight ${name}`, "not a tensor", `a Tensor of shape [${shape.join(", ")}]`, kindOf(t));
    const ok = t.shape.length === shape.length && shape.every((d, i) => typeof d === "string" || d === t.shape[i]);
    if (!ok) throw new GraphValidationError(`weight ${name}`, "wrong shape", `[${shape.join(", ")}]`, formatShape(t.shape));
    out.set(name, t);
  }
  if (!options.partial) {
    for (const [name, shape] of declared) {
      if (!given.has(name)) throw new GraphValidationError(`weight ${name}`, "missing weight", `a tensor of shape [${shape.join(", ")}]`, "nothing");
    }
  }
  return out;
}
