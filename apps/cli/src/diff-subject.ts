// What `attngraph diff` runs: a graph with its inputs and weights, from any of the files the CLI reads. A golden case
// (attention, golden-grad or golden-train) gives its graph, with the gradient graph when it expects gradients, so the
// backward ops are diffed too; a repro gives its one node and the recorded inputs; a graph document gives its graph,
// fed seeded random values (its symbolic dims bound by --dims).
import { fromJSON, type OpGraph, type OpRegistry, type ValueDecl } from "@attngraph/graph";
import { Tensor, clip, type AnyTensor } from "@attngraph/tensor";
import { loadAnyCase, mulberry32 } from "@attngraph/testkit";
import { REPRO_FORMAT, readRepro } from "@attngraph/tools";
import { readFileSync } from "node:fs";
import { attentionGraphCase, withGradients } from "./conformance/run-case.js";
import { trainGraphCase } from "./conformance/run-train-case.js";
import { UsageError } from "./io.js";

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
}

export function loadDiffSubject(file: string, options: SubjectOptions): DiffSubject {
  const format = formatOf(file);
  if (format === REPRO_FORMAT) {
    const { repro, graph, inputs } = readRepro(readFileSync(file, "utf8"), options.registry);
    return { name: `repro of ${repro.node} (${repro.kind})`, graph, inputs, weights: {} };
  }
  if (format === "attngraph.graph") return randomFed(file, options);
  const loaded = loadAnyCase(file);
  const gc = loaded.format === "train" ? trainGraphCase(loaded.case) : attentionGraphCase(loaded.case, options.fusedQkv);
  const { graph, inputs } = withGradients(gc);
  return { name: loaded.case.name, graph, inputs, weights: gc.weights() };
}

/** A document's `format` field, or undefined for one without (golden cases have none). Unreadable files fail later, in the case loader's words. */
export function formatOf(file: string): unknown {
  try {
    const doc: unknown = JSON.parse(readFileSync(file, "utf8"));
    return typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).format : undefined;
  } catch {
    return undefined;
  }
}

/** A graph document with every input and weight drawn uniformly from [-1, 1) (seeded): a diff needs values, not meaning. */
function randomFed(file: string, options: SubjectOptions): DiffSubject {
  const graph = fromJSON(readFileSync(file, "utf8"), options.registry);
  const dims = parseDims(options.dims);
  const next = mulberry32(options.seed ?? 0);
  return { name: clip(file), graph, inputs: seededValues(file, graph.inputs, dims, next), weights: seededValues(file, graph.weights, dims, next) };
}

/**
 * Values drawn uniformly from [-1, 1) by `next` for a graph document's declarations (inputs or weights), symbolic dims
 * sized by `dims`. Also what `attngraph export` gives a graph document's weights when no weights file is named.
 */
export function seededValues(file: string, decls: readonly ValueDecl[], dims: ReadonlyMap<string, number>, next: () => number): Record<string, AnyTensor> {
  return Object.fromEntries(
    decls.map((d) => {
      if (d.dtype === "int32") throw new UsageError(`${clip(file)}: input ${clip(d.name)} is int32 (token ids or targets): random values would not be valid ones; diff a golden case instead`);
      const shape = d.shape.map((s) => {
        if (typeof s === "number") return s;
        const v = dims.get(s);
        if (v === undefined) throw new UsageError(`${clip(file)}: ${clip(d.name)} has the symbolic dim ${clip(s)}: give its size with --dims ${clip(s)}=<n>`);
        return v;
      });
      const size = shape.reduce((a, b) => a * b, 1);
      return [d.name, new Tensor(Float32Array.from({ length: size }, () => next() * 2 - 1), shape)];
    }),
  );
}

/** `--dims B=2,T=8` as a map from dim name to size. */
export function parseDims(text: string | undefined): Map<string, number> {
  const dims = new Map<string, number>();
  if (!text) return dims;
  for (const part of text.split(",")) {
    const m = /^\s*([^=\s]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || Number(m[2]) < 1) throw new UsageError(`--dims: expected name=size pairs like B=2,T=8 (sizes >= 1), got "${clip(part)}"`);
    dims.set(m[1]!, Number(m[2]));
  }
  return dims;
}
