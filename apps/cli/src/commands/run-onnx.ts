// `attngraph run <model.onnx> --inputs <inputs.json> [--tap <name|glob>]...`: the ONNX model imported for the shapes of
// the inputs, run once on the executor, and the tapped tensors printed (default: the model's outputs). A tap name is
// an ONNX node or value name, an attngraph node name, an alias such as `/h.0/attn/weights`, a last segment
// (`weights`: every attention's weights) or a glob (`/h.0/*`).
import { compile } from "@attngraph/runtime";
import { clip, type Tensor } from "@attngraph/tensor";
import { executorsFor } from "../executors.js";
import { UsageError, type IO } from "../io.js";
import { loadOnnxFile } from "../onnx-file.js";

export interface RunOnnxArgs {
  readonly file: string;
  readonly executor: string;
  readonly tap: readonly string[];
  readonly explain: boolean;
  readonly threads?: number | undefined;
  readonly inputs?: string | undefined;
  readonly dims?: string | undefined;
}

export async function runOnnx(args: RunOnnxArgs, io: IO): Promise<number> {
  if (args.inputs === undefined)
    throw new UsageError(
      `run ${clip(args.file)}: an ONNX model runs on the tensors of --inputs <inputs.json> ({ "name": { "shape": [...], "data": [...] } })`,
    );
  const { imported, inputs } = loadOnnxFile(args.file, args);
  const select = args.tap.includes("all") ? () => true : imported.select(args.tap.length ? args.tap : imported.outputs);
  const session = await compile(imported.graph, {
    executors: executorsFor(args.executor, undefined, { threads: args.threads }),
    weights: imported.weights,
  });
  if (args.explain) io.out(`${imported.explain()}\n\n${session.explain()}\n`);
  const tapped: { node: string; tensor: Tensor }[] = [];
  const sub = session.tap(select).subscribe((e) => tapped.push(e));
  try {
    await session.run(inputs!);
  } finally {
    sub.unsubscribe();
    await session.dispose();
  }
  io.out(`${clip(args.file)} on ${clip(args.executor)}`);
  for (const { node, tensor } of tapped) io.out(`\n${node} [${tensor.shape.join(", ")}]\n${tensor.toString()}`);
  return 0;
}
