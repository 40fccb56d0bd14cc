// What `attngraph diff` runs: a graph with its inputs and weights, from any of the files the CLI reads. A golden case
// (attention, golden-grad or golden-train) gives its graph, with the gradient graph when it expects gradients, so the
// backward ops are diffed too; a repro gives its one node and the recorded inputs; a graph document gives its graph,
// fed seeded random values (its symbolic dims bound by --dims).
import { modelCaseSubject } from "./conformance/model-subject.js";
import { fromJSON, type OpGraph, type OpRegistry } from "@attngraph/graph";
import { clip, type AnyTensor } from "@attngraph/tensor";
import { flexGraphCase, isFlexCaseJSON, isTrainCaseJSON, mulberry32 } from "@attngraph/testkit";
import { readRepro } from "@attngraph/tools";
import { attentionGraphCase, withGradients } from "./conformance/run-case.js";
import { trainGraphCase } from "./conformance/run-train-case.js";
import { caseOf, type JsonDocument } from "./document.js";
import { refuseFlags } from "./flags.js";
import { checkDimsUsed, parseDims, seededValues } from "./seeded-values.js";

export interface DiffSubject {
  readonly name: string;
  readonly graph: OpGraph;
  readonly inputs: Readonly<Record<string, AnyTensor>>;
  readonly weights: Readonly<Record<string, AnyTensor>>;
}

export interface SubjectOptions {
  readonly fusedQkv: boolean;
  /** Sizes of a graph document's symbolic dims ("B=2,T=8"). */
  readonly dims?: string;
  /** Seed of a graph document's random inputs and weights. */
  readonly seed?: number;
  /** Op kinds of a graph document or repro beyond the built-in ones (`--ops`). */
  readonly registry?: OpRegistry;
  /**
   * The one file diff was given: a flag that does nothing for its kind (--dims for a golden case) is a usage error.
   * A folder mixes kinds, so there each flag applies to the files it fits.
   */
  readonly strict?: boolean;
}

export function loadDiffSubject(doc: JsonDocument, options: SubjectOptions): DiffSubject {
  if (options.strict) refuseIdle(doc, options);
  if (doc.kind === "repro") {
    const { repro, graph, inputs } = readRepro(doc.json, options.registry);
    return { name: `repro of ${repro.node} (${repro.kind})`, graph, inputs, weights: {} };
  }
  if (doc.kind === "graph") return randomFed(doc, options);
  const loaded = caseOf(doc);
  if (loaded.format === "models") return { name: loaded.case.name, ...modelCaseSubject(loaded.case) };
  const gc =
    loaded.format === "train"
      ? trainGraphCase(loaded.case)
      : loaded.format === "flex"
        ? flexGraphCase(loaded.case)
        : attentionGraphCase(loaded.case, options.fusedQkv);
  const { graph, inputs } = withGradients(gc);
  return { name: loaded.case.name, graph, inputs, weights: gc.weights() };
}

/** A graph document with every input and weight drawn uniformly from [-1, 1) (seeded): a diff needs values, not meaning. */
function randomFed(doc: JsonDocument, options: SubjectOptions): DiffSubject {
  const graph = fromJSON(doc.json, options.registry);
  const dims = parseDims(options.dims);
  const decls = [...graph.inputs, ...graph.weights];
  if (options.strict) checkDimsUsed(doc.path, dims, decls, "input or weight");
  // One call for both, so the size limit counts them together; inputs are drawn first, then weights.
  const values = seededValues(doc.path, decls, dims, mulberry32(options.seed ?? 0));
  const pick = (names: readonly { name: string }[]) => Object.fromEntries(names.map((d) => [d.name, values[d.name]!]));
  return { name: clip(doc.path), graph, inputs: pick(graph.inputs), weights: pick(graph.weights) };
}

function refuseIdle(doc: JsonDocument, options: SubjectOptions): void {
  if (doc.kind !== "graph") {
    const why =
      doc.kind === "repro"
        ? "with a repro: it brings the recorded inputs"
        : "with a golden case: it brings its own inputs and weights";
    refuseFlags("diff", `${why} (--dims and --seed are for a graph document)`, {
      "--dims": options.dims,
      "--seed": options.seed,
    });
  }
  if (doc.kind !== "case" || isTrainCaseJSON(doc.json) || isFlexCaseJSON(doc.json)) {
    const what =
      doc.kind === "case"
        ? isFlexCaseJSON(doc.json)
          ? "a golden-flex case"
          : "a golden-train case"
        : doc.kind === "repro"
          ? "a repro"
          : "a graph document";
    refuseFlags("diff", `with ${what}: it builds a golden attention case's graph with one fused QKV projection`, {
      "--fused-qkv": options.fusedQkv,
    });
  }
}
