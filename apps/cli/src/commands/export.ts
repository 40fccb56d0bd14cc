// `attngraph export`: a golden case or a graph document as an ONNX model file, for onnxruntime or any ONNX runtime.
// A case brings its weights; a graph document takes them from a .safetensors file (--weights, by weight name, as
// torch's save_file writes a state_dict) or, without one, seeded random values, as `attngraph diff` feeds it.
import { modelCaseSubject } from "../conformance/model-subject.js";
import { fromJSON, type OpGraph } from "@attngraph/graph";
import { readSafetensors } from "@attngraph/nn";
import { exportOnnxWithReport, formatExportReport, modelWeights } from "@attngraph/onnx";
import { clip, type AnyTensor } from "@attngraph/tensor";
import { flexGraphCase, mulberry32 } from "@attngraph/testkit";
import { attentionGraphCase } from "../conformance/run-case.js";
import { buildTrainCase } from "../conformance/run-train-case.js";
import { caseOf, expectKind, readDocument, type JsonDocument } from "../document.js";
import { readBytes, writeFile } from "../files.js";
import { refuseFlags, type CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";
import { checkDimsUsed, parseDims, seededValues } from "../seeded-values.js";
import { loadUserOps } from "../user-ops.js";

export const exportHelp = `attngraph export <case.json | graph.json> -o <model.onnx> [--contrib auto|none] [--weights <file.safetensors>]
                  [--seed n] [--dims B=2,T=8] [--ops <module.js>] [--fused-qkv] [--explain]
  Writes the graph and its weights as an ONNX model (opset 17; with --contrib auto, the default, onnxruntime's
  com.microsoft ops where they are faster and exact, e.g. Gelu, SkipLayerNormalization). A golden case exports its
  forward graph with its own weights. A graph document takes its weights from --weights (a .safetensors file, tensors
  named like the graph's weights); without it every weight is a seeded random value in [-1, 1) (--seed, default 0),
  which is only good for checking that the graph exports and runs. A decode graph (kv-append caches) becomes a model
  with each cache's past as an input (named as its cache weight, [B, Hkv, P, D]) and its present as an output (named
  as its kv-append node, [B, Hkv, P + T, D]) to feed back on the next call. A node with no ONNX form (a user op, a
  backward op, training-mode dropout) fails the export, naming it. --explain prints which ONNX ops each node became.`;

export const exportCommand: CommandLine = {
  flags: ["output", "contrib", "weights", "seed", "dims", "ops", "fused-qkv", "explain"],
  operand: "<case.json | graph.json>",
};

export interface ExportArgs {
  readonly positionals: string[];
  readonly fusedQkv: boolean;
  readonly explain: boolean;
  readonly output?: string;
  readonly contrib?: string;
  readonly weights?: string;
  readonly seed?: string;
  readonly dims?: string;
  readonly ops?: string;
}

export async function exportModel(args: ExportArgs, io: IO): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new UsageError(`missing <case.json | graph.json>\n${exportHelp}`);
  if (!args.output) throw new UsageError(`missing -o <model.onnx>: where to write the model\n${exportHelp}`);
  const contrib = args.contrib ?? "auto";
  if (contrib !== "auto" && contrib !== "none")
    throw new UsageError(`--contrib: expected auto or none, got "${clip(contrib)}"`);
  const doc = readDocument(file);
  expectKind(doc, "export", ["case", "graph"]);
  const { graph, weights, what } = doc.kind === "graph" ? await graphSubject(doc, args) : caseSubject(doc, args);
  const { model, report } = exportOnnxWithReport(graph, weights, { contrib });
  writeFile(args.output, model, "-o");
  const contribNodes = report.nodes.filter((n) => n.contrib).length;
  const opsets = report.opsetImports.map((o) => `${o.domain || "ai.onnx"} ${o.version}`).join(", ");
  io.out(
    `wrote ${args.output}: ${report.nodes.length} nodes (${contribNodes} as com.microsoft ops), ${model.length} bytes, opsets ${opsets}; ${what}`,
  );
  if (args.explain) for (const line of formatExportReport(report).split("\n")) io.out(line);
  return 0;
}

type Subject = { graph: OpGraph; weights: Readonly<Record<string, AnyTensor>>; what: string };

/** A graph document's graph, its weights from --weights or, without, seeded random values, as `attngraph diff` feeds it. */
async function graphSubject(doc: JsonDocument, args: ExportArgs): Promise<Subject> {
  refuseFlags(
    "export",
    "with a graph document: it is exported as it is (--fused-qkv builds a golden attention case with one QKV projection)",
    { "--fused-qkv": args.fusedQkv },
  );
  const registry = args.ops ? (await loadUserOps(args.ops)).registry : undefined;
  const graph = fromJSON(doc.json, registry);
  if (args.weights) {
    refuseFlags(
      "export",
      "with --weights (--seed and --dims are for the random weights drawn without a weights file)",
      { "--seed": args.seed, "--dims": args.dims },
    );
    return {
      graph,
      weights: Object.fromEntries(readSafetensors(readBytes(args.weights, "--weights")).tensors),
      what: `weights from ${args.weights}`,
    };
  }
  const seed = args.seed === undefined ? 0 : Number(args.seed);
  if (!Number.isInteger(seed)) throw new UsageError(`--seed: expected an integer, got "${clip(args.seed!)}"`);
  // The model's weights only: a decode graph's caches become past inputs, so none is drawn for them.
  const decls = modelWeights(graph);
  const dims = parseDims(args.dims);
  checkDimsUsed(doc.path, dims, decls, "weight", "only weights are drawn; an input's dims stay symbolic in the model");
  return {
    graph,
    weights: seededValues(doc.path, decls, dims, mulberry32(seed)),
    what: `random weights (seed ${seed}): give real ones with --weights`,
  };
}

/** A golden case's forward graph with the case's own weights. */
function caseSubject(doc: JsonDocument, args: ExportArgs): Subject {
  refuseFlags(
    "export",
    "with a golden case: it brings its own weights and uses the built-in ops (these are for a graph document)",
    { "--weights": args.weights, "--seed": args.seed, "--dims": args.dims, "--ops": args.ops },
  );
  const loaded = caseOf(doc);
  const what = `the case's weights (${loaded.case.name})`;
  if (loaded.format === "train") {
    refuseFlags("export", "with a golden-train case: it builds a golden attention case with one QKV projection", {
      "--fused-qkv": args.fusedQkv,
    });
    return { ...buildTrainCase(loaded.case), what };
  }
  if (loaded.format === "models") {
    refuseFlags("export", "with a golden-models case: the model's own layout decides its projections", {
      "--fused-qkv": args.fusedQkv,
    });
    const { graph, weights } = modelCaseSubject(loaded.case);
    return { graph, weights, what };
  }
  if (loaded.format === "flex") {
    refuseFlags("export", "with a golden-flex case: it builds the variant's attention core", {
      "--fused-qkv": args.fusedQkv,
    });
    const gc = flexGraphCase(loaded.case);
    return { graph: gc.graph, weights: gc.weights(), what };
  }
  const gc = attentionGraphCase(loaded.case, args.fusedQkv);
  return { graph: gc.graph, weights: gc.weights(), what };
}
