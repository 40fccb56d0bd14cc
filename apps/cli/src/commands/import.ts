// `attngraph import <model.onnx> [--inputs inputs.json | --dims batch=1,T=7] [--explain]`: what the importer makes of
// an ONNX file: the op types found, the nodes folded at import, the patterns and attention chains recognised, and
// with --explain each attngraph node with the ONNX nodes it stands for. Shapes are fixed at import, so a file with
// symbolic dims needs their sizes (--dims) or example inputs (--inputs).
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { clip } from "@attngraph/tensor";
import { refuseFlags, type CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";
import { isOnnxPath, loadOnnxFile } from "../onnx-file.js";

export const importHelp = `attngraph import <model.onnx> [--inputs <inputs.json> | --dims batch=1,T=7] [--explain]
  Imports an ONNX model (what torch.onnx.export writes for transformers) and says what became of it: op types,
  nodes folded at import, attention chains recognised (score, mask, softmax, weighted-sum), and with --explain every
  attngraph node and the ONNX nodes it stands for. An op type the importer does not build is named with its count.`;

export const importCommand: CommandLine = { flags: ["inputs", "dims", "explain"], operand: "<model.onnx>" };

export interface ImportArgs {
  readonly positionals: string[];
  readonly explain: boolean;
  readonly inputs?: string;
  readonly dims?: string;
}

export async function importModel(args: ImportArgs, io: IO): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new UsageError(`missing <model.onnx>\n${importHelp}`);
  if (args.positionals.length > 1)
    throw new UsageError(`import takes one file, got ${args.positionals.length}: ${clip(args.positionals.join(" "))}`);
  if (!isOnnxPath(file)) throw new UsageError(`import reads an ONNX model (a .onnx file), got ${clip(file)}`);
  if (args.inputs !== undefined)
    refuseFlags("import", "with --inputs (the shapes come from the inputs)", { "--dims": args.dims });
  const { imported } = loadOnnxFile(file, args);
  const text = imported.explain();
  if (!args.explain) {
    // The summary: everything before the per-node list.
    io.out(
      `${text.slice(0, text.indexOf("\nattngraph nodes:"))}\nattngraph nodes: ${imported.graph.nodes.length} (--explain lists them)`,
    );
    return 0;
  }
  // What the scheduler makes of the graph (its fusions), planned on the cpu executor: compiling runs nothing.
  const session = await compile(imported.graph, { executors: [createCpuExecutor()], weights: imported.weights });
  const passes = session
    .explain()
    .split("\n")
    .filter((l) => l.startsWith("pass "));
  await session.dispose();
  io.out(`${text}\n${passes.join("\n")}`);
  return 0;
}
