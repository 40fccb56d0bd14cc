import { formatDims, inferShape, isConcrete, makeContext, type SymShape } from "@attngraph/graph";
import { SubjectError, formatShape, type Shape } from "@attngraph/tensor";
import type { Plan } from "./plan.js";

/** A run's inputs do not fit the graph's declared inputs (missing, unknown, wrong rank, inconsistent dims). */
export class InputError extends SubjectError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("input", subject, what, expected, got);
    this.name = "InputError";
  }
}

/**
 * Binds the symbolic dims of the graph inputs to a run's real shapes and re-runs every node's shape rule on concrete
 * shapes. What could not be checked at build time (a symbol against a number) is checked here, naming the input or node.
 * Returns the concrete shape of every value.
 */
export function resolveShapes(
  plan: Plan,
  inputShapes: Readonly<Record<string, Shape>>,
  weightShapes: Readonly<Record<string, Shape>>,
  dims: Readonly<Record<string, number>> = {},
): Map<string, Shape> {
  return resolveBinding(plan, inputShapes, weightShapes, dims).shapes;
}

/** A run's shapes, and the attributes of the steps whose "dim"/"dims" attributes named symbolic dims, bound. */
export interface Binding {
  readonly shapes: Map<string, Shape>;
  /** Only the steps with a symbolic "dim" attribute; a kernel gets these instead of the step's own attributes. */
  readonly attrs: Map<string, Readonly<Record<string, unknown>>>;
}

/**
 * resolveShapes, plus the bound attributes. `dims` binds symbolic dims no input carries (a decode session's past
 * length `P`); an input that binds the same name must agree with it.
 */
export function resolveBinding(
  plan: Plan,
  inputShapes: Readonly<Record<string, Shape>>,
  weightShapes: Readonly<Record<string, Shape>>,
  dims: Readonly<Record<string, number>> = {},
): Binding {
  const bindings = new Map<string, { size: number; from: string }>();
  const shapes = new Map<string, Shape>();
  const boundAttrs = new Map<string, Readonly<Record<string, unknown>>>();
  for (const [name, size] of Object.entries(dims)) {
    if (!Number.isSafeInteger(size) || size < 0)
      throw new InputError(`dim ${name}`, "a run's dim must be an integer >= 0", "an integer >= 0", String(size));
    bindings.set(name, { size, from: "the run's dims" });
  }
  const declared = new Set(plan.inputs.map((i) => i.name));
  for (const name of Object.keys(inputShapes)) {
    if (!declared.has(name))
      throw new InputError(`input ${name}`, "unknown input", [...declared].join(", ") || "no inputs", name);
  }
  const bind = (kind: "input" | "weight", name: string, decl: SymShape, actual: Shape | undefined) => {
    if (actual === undefined)
      throw new InputError(`${kind} ${name}`, `missing ${kind}`, `a tensor of shape ${formatDims(decl)}`, "nothing");
    if (actual.length !== decl.length) {
      throw new InputError(
        `${kind} ${name}`,
        "wrong rank",
        `${formatDims(decl)} (rank ${decl.length})`,
        `${formatShape(actual)} (rank ${actual.length})`,
      );
    }
    decl.forEach((d, i) => {
      const got = actual[i]!;
      if (typeof d === "number") {
        if (d !== got)
          throw new InputError(`${kind} ${name}`, `wrong size of dim ${i}`, `${formatDims(decl)}`, formatShape(actual));
        return;
      }
      const prev = bindings.get(d);
      if (prev && prev.size !== got) {
        throw new InputError(
          `${kind} ${name}`,
          `dim ${i} (${d}) disagrees with ${prev.from}`,
          `${d}=${prev.size}`,
          `${d}=${got} in ${formatShape(actual)}`,
        );
      }
      if (!prev) bindings.set(d, { size: got, from: `${kind} ${name}` });
    });
    shapes.set(name, actual);
  };
  // Own keys only: a graph input named "constructor" that the caller did not pass is missing, not Object's constructor.
  const own = (r: Readonly<Record<string, Shape>>, name: string) => (Object.hasOwn(r, name) ? r[name] : undefined);
  for (const v of plan.weights) bind("weight", v.name, v.shape, own(weightShapes, v.name));
  for (const v of plan.inputs) bind("input", v.name, v.shape, own(inputShapes, v.name));

  for (const step of plan.steps) {
    const def = plan.graph.registry.get(step.kind, step.node);
    const ctx = makeContext(step.node);
    // Attributes of type "dims" (reshape's and sum-to's target shape) may name symbolic dims: bound like the inputs.
    const concreteAttrs = bindDimsAttrs(def.attrs as Record<string, { type: string }>, step.attrs, bindings, step.node);
    // Kernels get bound "dim" attributes (a number where they take one); "dims" shapes they read from outShape.
    if (
      Object.entries(def.attrs as Record<string, { type: string }>).some(
        ([k, a]) => a.type === "dim" && typeof step.attrs[k] === "string",
      )
    )
      boundAttrs.set(step.node, concreteAttrs);
    const out = inferShape(
      def,
      step.inputs.map((v) => (v === undefined ? undefined : shapes.get(v))),
      concreteAttrs,
      ctx,
    );
    if (!isConcrete(out)) throw new InputError(step.node, "shape has an unbound dim", "concrete dims", formatDims(out));
    shapes.set(step.node, out);
  }
  return { shapes, attrs: boundAttrs };
}

function bindDimsAttrs(
  specs: Readonly<Record<string, { type: string }>>,
  attrs: Readonly<Record<string, unknown>>,
  bindings: ReadonlyMap<string, { size: number }>,
  node: string,
): Readonly<Record<string, unknown>> {
  let out: Record<string, unknown> | undefined;
  for (const [key, spec] of Object.entries(specs)) {
    const v = attrs[key];
    if (spec.type === "dim" && typeof v === "string") {
      out ??= { ...attrs };
      out[key] = bindAll([v], bindings, node, key)[0];
      continue;
    }
    if (spec.type !== "dims" || !Array.isArray(v)) continue;
    out ??= { ...attrs };
    out[key] = bindAll(v as SymShape, bindings, node, key);
  }
  return out ?? attrs;
}

function bindAll(
  shape: SymShape,
  bindings: ReadonlyMap<string, { size: number }>,
  node: string,
  key = "shape",
): number[] {
  return shape.map((d) => {
    if (typeof d === "number") return d;
    const b = bindings.get(d);
    if (!b)
      throw new InputError(
        `${node}.${key}`,
        `dim ${d} is bound by no input`,
        "a dim name used by a graph input (or given as a run's dims)",
        d,
      );
    return b.size;
  });
}
