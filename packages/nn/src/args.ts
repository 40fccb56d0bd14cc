// Checks of the arguments nn's functions take from callers (a graph, an options object). A null or a string where an
// object belongs would otherwise end in a plain TypeError from deep inside ("Cannot read properties of null"), which
// names neither the function nor the argument; these name both, in the project's "subject: what, expected, got" form.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { clip } from "@attngraph/tensor";

/** What a value is, for the `got` of a message: "null", "an array", "a Map", "an object", `"abc"`, "NaN", "number 5"… */
export function kindOf(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return "an array";
  if (v instanceof Map) return "a Map";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return clip(JSON.stringify(v), 60);
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return `${typeof v} ${String(v)}`;
  return typeof v;
}

/**
 * `graph` must be an OpGraph. Recognised by its methods, not by `instanceof`: a graph built by a second copy of
 * @attngraph/graph in one bundle is still a graph (the reason AttnGraphError and Tensor carry brands).
 */
export function checkGraph(subject: string, graph: unknown): asserts graph is OpGraph {
  const g = graph as Partial<OpGraph> | null | undefined;
  if (typeof g !== "object" || g === null || typeof g.has !== "function" || !Array.isArray(g.weights)) {
    throw new GraphValidationError(
      subject,
      "not an op graph",
      "an OpGraph (GraphBuilder.build(), a builder such as transformerBlock)",
      kindOf(graph),
    );
  }
}

/** An options argument: absent (undefined) or an object; null, a string or an array is a mistake, not "no options". */
export function checkOptions(subject: string, options: unknown, expected: string): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new GraphValidationError(subject, "options must be an object", expected, kindOf(options));
}
