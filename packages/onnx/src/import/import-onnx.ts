// importOnnx: an ONNX model (what torch.onnx.export writes for transformers) → an attngraph OpGraph and its weights.
// Reading (read-model.ts) checks the bytes; every op type is checked against the supported set before anything is
// built; shape arithmetic and constant masks are folded on the host for the dims given (fold.ts); patterns
// (patterns/*.ts) turn decomposed GELU, LayerNorm, Linear and attention chains into attngraph's own nodes, so that
// the scheduler's fusions apply; the rest is built node by node (lower-ops.ts). Node names point back to the file.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import type { AnyTensor, DType } from "@attngraph/tensor";
import { findChains } from "./chains.js";
import { foldNode } from "./fold.js";
import { GraphIndex } from "./graph-index.js";
import { isFloat } from "./host-tensor.js";
import { OnnxImportError, OnnxUnsupportedOpsError, type UnsupportedOp } from "./import-error.js";
import { LowerContext } from "./lower-context.js";
import { lowerNode } from "./lower-ops.js";
import { findGroups } from "./patterns/find.js";
import { readModel, type ModelIn, type NodeIn, type ReadOptions } from "./read-model.js";
import { ImportReport } from "./import-report.js";
import { resolveNames } from "./resolve.js";
import { OPSET_RANGE, isSupported } from "./supported-ops.js";

export interface ImportOptions extends ReadOptions {
  /** Values of the symbolic dims (dim_param) of the graph inputs, e.g. { batch: 1, T: 7 }. */
  readonly dims?: Readonly<Record<string, number>>;
  /** Whole input shapes by input name; they win over `dims` and must agree with the file's fixed dims. */
  readonly shapes?: Readonly<Record<string, readonly number[]>>;
}

export interface ImportedInput {
  readonly name: string;
  readonly shape: readonly number[];
  /** The attngraph dtype fed: int32 for ONNX int64/int32 ids, float32 for floats. */
  readonly dtype: DType;
  readonly onnxType: string;
}

export interface ImportedOnnx {
  readonly graph: OpGraph;
  readonly weights: Readonly<Record<string, AnyTensor>>;
  readonly inputs: readonly ImportedInput[];
  /** The ONNX graph's outputs, which are also the attngraph graph's output node names. */
  readonly outputs: readonly string[];
  readonly report: ImportReport;
  /** attngraph node names for an ONNX node or value name, an alias ("…/weights"), a last segment ("weights") or a glob. */
  resolve(name: string): string[];
  /** What the CLI's --tap and tools take: a predicate over node names for the given names (each must resolve). */
  select(names: readonly string[]): (node: string) => boolean;
  /** The import, readable: ops found, attention chains recognised, what became of each ONNX node. */
  explain(): string;
}

export function importOnnx(bytes: Uint8Array, options: ImportOptions = {}): ImportedOnnx {
  const model = readModel(bytes, options);
  checkOpsets(model);
  checkOpTypes(model);
  // A Gather or Slice of a weight (an embedding table read at positions 0…T−1) stays an op reading the weight, so
  // that the weight keeps its name (and setWeights reaches it), though its inputs are all known at import.
  const index = new GraphIndex(model, (n) => {
    const t = model.initializers.get(n.inputs[0] ?? "");
    return (
      (n.opType === "Gather" || n.opType === "Slice") && t !== undefined && isFloat(t.dtype) && t.shape.length === 2
    );
  });
  const ctx = new LowerContext(index);
  const inputs = declareInputs(model, ctx, options);
  for (const [name, t] of model.initializers) if (!ctx.env.has(name)) ctx.env.set(name, { kind: "const", t });
  const groups = findGroups(index);
  const byTerminal = new Map(groups.map((g) => [g.terminal, g]));
  const deferred = new Set(groups.flatMap((g) => g.internal));
  for (const n of model.nodes) {
    if (deferred.has(n)) continue;
    const group = byTerminal.get(n);
    if (group) {
      if (group.lower(ctx)) {
        ctx.patterns.push(group.kind);
        continue;
      }
      for (const m of [...group.internal].sort((a, b) => a.index - b.index)) build(ctx, m);
    }
    build(ctx, n);
  }
  ctx.chains.push(...findChains(ctx));
  const outputs = model.outputs.map((o) => outputNode(ctx, o.name));
  ctx.b.output(...outputs);
  const graph = ctx.b.build();
  const report = new ImportReport(model, ctx, groups.length);
  return {
    graph,
    weights: ctx.weights,
    inputs,
    outputs,
    report,
    resolve: (name) => resolveNames(graph, ctx.aliases, name),
    select: (names) => {
      const all = new Set(
        names.flatMap((n) => {
          const found = resolveNames(graph, ctx.aliases, n);
          if (found.length === 0)
            throw new OnnxImportError(
              `tap ${n}`,
              "no node of the imported graph has this name",
              "an ONNX node or value name, an attngraph node name, an alias like …/weights, or a glob",
              n,
            );
          return found;
        }),
      );
      return (node) => all.has(node);
    },
    explain: () => report.format(),
  };
}

function build(ctx: LowerContext, n: NodeIn): void {
  if (ctx.index.isStatic(n.outputs[0] ?? "")) {
    foldNode(ctx, n);
    ctx.folded++;
  } else lowerNode(ctx, n);
}

function checkOpsets(model: ModelIn): void {
  const v = model.opsets.get("") ?? model.opsets.get("ai.onnx");
  if (v === undefined)
    throw new OnnxImportError(
      "model.opset_import",
      "the model imports no version of the default ONNX domain",
      `an opset from ${OPSET_RANGE.min} to ${OPSET_RANGE.max}`,
      [...model.opsets].map(([d, n]) => `${d || "ai.onnx"} ${n}`).join(", ") || "none",
    );
  if (v < OPSET_RANGE.min || v > OPSET_RANGE.max)
    throw new OnnxImportError(
      "model.opset_import",
      "an opset whose ops the importer does not read",
      `${OPSET_RANGE.min} … ${OPSET_RANGE.max} (re-export with opset_version=17)`,
      String(v),
    );
}

function checkOpTypes(model: ModelIn): void {
  const bad = new Map<string, UnsupportedOp & { nodes: string[] }>();
  for (const n of model.nodes) {
    if (isSupported(n.domain, n.opType)) continue;
    const key = `${n.domain}\u0000${n.opType}`;
    const entry = bad.get(key) ?? { opType: n.opType, domain: n.domain, count: 0, nodes: [] };
    bad.set(key, {
      ...entry,
      count: entry.count + 1,
      nodes: entry.nodes.length < 3 ? [...entry.nodes, n.name] : entry.nodes,
    });
  }
  if (bad.size > 0) throw new OnnxUnsupportedOpsError([...bad.values()].sort((a, b) => b.count - a.count));
}

function declareInputs(model: ModelIn, ctx: LowerContext, options: ImportOptions): ImportedInput[] {
  const missing: string[] = [];
  const out: ImportedInput[] = [];
  for (const v of model.inputs) {
    if (model.initializers.has(v.name)) continue; // IR < 4 lists initializers among the inputs
    if (v.elemType === undefined || !["float32", "int64", "int32", "float16", "float64"].includes(v.elemType)) {
      throw new OnnxImportError(
        `input ${v.name}`,
        "an input type the importer does not feed",
        "FLOAT or INT64/INT32 (token ids)",
        v.elemTypeName,
      );
    }
    if (!v.dims)
      throw new OnnxImportError(
        `input ${v.name}`,
        "the input has no shape in the file",
        "a shape (or shapes: { name: [...] })",
        "none",
      );
    const given = options.shapes && Object.hasOwn(options.shapes, v.name) ? options.shapes[v.name] : undefined;
    if (given && (!Array.isArray(given) || given.length !== v.dims.length))
      throw new OnnxImportError(
        `shapes.${v.name}`,
        "the shape does not have the input's rank",
        `${v.dims.length} dims`,
        JSON.stringify(given),
      );
    const shape = v.dims.map((d, i) => {
      const g = given?.[i];
      if (g !== undefined) {
        if (!Number.isSafeInteger(g) || g < 0 || g > 2 ** 31 - 1)
          throw new OnnxImportError(
            `shapes.${v.name}[${i}]`,
            "a dim must be a whole number >= 0",
            "0 … 2^31 − 1",
            String(g),
          );
        if (typeof d === "number" && d !== g)
          throw new OnnxImportError(`shapes.${v.name}[${i}]`, "the file fixes this dim", String(d), String(g));
        return g;
      }
      if (typeof d === "number") return d;
      const fromDims = d !== undefined && options.dims && Object.hasOwn(options.dims, d) ? options.dims[d] : undefined;
      if (fromDims === undefined) {
        missing.push(`${v.name}[${i}]${d ? ` (${d})` : ""}`);
        return 0;
      }
      if (!Number.isSafeInteger(fromDims) || fromDims < 0 || fromDims > 2 ** 31 - 1)
        throw new OnnxImportError(`dims.${d}`, "a dim must be a whole number >= 0", "0 … 2^31 − 1", String(fromDims));
      return fromDims;
    });
    if (shape.reduce((a, x) => a * x, 1) > 2 ** 31 - 1)
      throw new OnnxImportError(
        `input ${v.name}`,
        "the dims overflow: more elements than one tensor can hold",
        "at most 2^31 − 1 elements",
        `[${shape.join(", ")}]`,
      );
    const dtype: DType = isFloat(v.elemType) ? "float32" : "int32";
    out.push({ name: v.name, shape, dtype, onnxType: v.elemTypeName });
  }
  if (missing.length)
    throw new OnnxImportError(
      "dims",
      "the inputs have dims the file leaves open",
      "their values: dims: { name: n } or shapes: { input: [...] }",
      missing.join(", "),
    );
  for (const i of out) {
    ctx.b.input(i.name, [...i.shape], i.dtype);
    ctx.env.set(i.name, { kind: "node", ref: i.name, shape: i.shape, dtype: i.dtype });
  }
  return out;
}

/** The attngraph node for ONNX output `name`, named `name` (a copy by reshape where the value has another name). */
function outputNode(ctx: LowerContext, name: string): string {
  if (!ctx.env.has(name))
    throw new OnnxImportError(`output ${name}`, "no node makes this output", "an output some node writes", name);
  const v = ctx.outputVal(name);
  if (v.kind === "const")
    throw new OnnxImportError(
      `output ${name}`,
      "unsupported: an output that is a constant (it does not depend on any input)",
      "an output computed from the inputs",
      "a constant",
    );
  if (v.ref === name) return name;
  if (ctx.taken(name))
    throw new GraphValidationError(
      name,
      "an output's name is taken by another value",
      "a free name",
      name,
      "duplicate-name",
    );
  return ctx.add("reshape", name, { x: v.ref }, { shape: [...v.shape] }, [], `the output ${name} (a copy of ${v.ref})`);
}
