// Checks of what a caller hands the runtime as tensors: run inputs and weights. Only own keys count (a weight named
// "constructor" or an input "__proto__" is a name like any other, never something inherited from Object.prototype),
// and a value is a Tensor only by its brand (`Tensor.isTensor`): an object that merely has a `shape` would otherwise
// reach an executor and fail there with an error that names neither the input nor what was wrong.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { formatShape, Tensor, type AnyTensor } from "@attngraph/tensor";

/** What a non-tensor is, for messages: "null", "an array", "an object with a shape but no Tensor brand", "number". */
function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object")
    return "shape" in v ? "an object with a shape that is not a Tensor" : "an object that is not a Tensor";
  return typeof v;
}

function dtypeWanted(dtype: string): string {
  return dtype === "int32" ? "an int32 tensor (Tensor.int32)" : `a ${dtype} tensor`;
}

function ownEntries(record: unknown, subject: string, what: string): [string, unknown][] {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    throw new GraphValidationError(subject, `invalid ${what}`, `an object of tensors by name`, kindOf(record));
  }
  return Object.keys(record).map((k) => [k, (record as Record<string, unknown>)[k]]);
}

/**
 * A run's inputs by name; every value a Tensor of the dtype the graph declares for that input (token ids are int32, a
 * float32 tensor of ids is an error, not a silent conversion). Unknown or missing names are the scheduler's to report
 * (bind.ts).
 */
/** Each graph's declared input dtypes, by name: made once, not on every run (a graph's inputs do not change). */
const inputDtypes = new WeakMap<OpGraph, ReadonlyMap<string, string>>();

export function checkInputs(graph: OpGraph, inputs: unknown): Map<string, AnyTensor> {
  let declared = inputDtypes.get(graph);
  if (declared === undefined)
    inputDtypes.set(graph, (declared = new Map(graph.inputs.map((v) => [v.name, v.dtype ?? "float32"] as const))));
  const out = new Map<string, AnyTensor>();
  for (const [name, t] of ownEntries(inputs, "run inputs", "inputs")) {
    if (!Tensor.isTensor(t))
      throw new GraphValidationError(`input ${name}`, "not a tensor", "a Tensor (@attngraph/tensor)", kindOf(t));
    const dtype = declared.get(name);
    if (dtype !== undefined && t.dtype !== dtype)
      throw new GraphValidationError(
        `input ${name}`,
        "wrong dtype",
        dtypeWanted(dtype),
        `${t.dtype} ${formatShape(t.shape)}`,
      );
    out.set(name, t);
  }
  return out;
}

/**
 * Weights against the graph's declarations: every name declared (and, unless `partial`, every declaration given),
 * every value a Tensor of the declared shape (symbolic dims match any size).
 */
export function checkWeights(
  graph: OpGraph,
  weights: unknown,
  options: { readonly partial?: boolean } = {},
): Map<string, AnyTensor> {
  const declared = new Map(graph.weights.map((w) => [w.name, w.shape] as const));
  const dtypes = new Map(graph.weights.map((w) => [w.name, w.dtype ?? "float32"] as const));
  // Only undefined means "none" (compile without weights); null is a mistake to report (setWeights(null) did nothing).
  const given = new Map(ownEntries(weights === undefined ? {} : weights, "weights", "weights"));
  const out = new Map<string, AnyTensor>();
  for (const [name, t] of given) {
    const shape = declared.get(name);
    if (!shape)
      throw new GraphValidationError(
        `weight ${name}`,
        "the graph declares no such weight",
        [...declared.keys()].join(", ") || "no weights",
        name,
      );
    if (!Tensor.isTensor(t))
      throw new GraphValidationError(
        `weight ${name}`,
        "not a tensor",
        `a Tensor of shape [${shape.join(", ")}]`,
        kindOf(t),
      );
    const ok = t.shape.length === shape.length && shape.every((d, i) => typeof d === "string" || d === t.shape[i]);
    if (!ok)
      throw new GraphValidationError(`weight ${name}`, "wrong shape", `[${shape.join(", ")}]`, formatShape(t.shape));
    if (t.dtype !== dtypes.get(name))
      throw new GraphValidationError(
        `weight ${name}`,
        "wrong dtype",
        dtypeWanted(dtypes.get(name)!),
        `${t.dtype} ${formatShape(t.shape)}`,
      );
    out.set(name, t);
  }
  if (!options.partial) {
    for (const [name, shape] of declared) {
      if (!given.has(name))
        throw new GraphValidationError(
          `weight ${name}`,
          "missing weight",
          `a tensor of shape [${shape.join(", ")}]`,
          "nothing",
        );
    }
  }
  return out;
}
