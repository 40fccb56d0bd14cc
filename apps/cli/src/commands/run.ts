import { modelCaseSubject } from "../conformance/model-subject.js";
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { clip, type AnyTensor, type Tensor } from "@attngraph/tensor";
import { flexGraphCase } from "@attngraph/testkit";
import type { OpGraph } from "@attngraph/graph";
import { buildTrainCase } from "../conformance/run-train-case.js";
import { caseOf, expectKind, readDocument } from "../document.js";
import { replay } from "../replay.js";
import { loadUserOps } from "../user-ops.js";
import { DEFAULT_EXECUTOR, executorsFor } from "../executors.js";
import { refuseFlags, type CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";
import { isOnnxPath } from "../onnx-file.js";
import { runOnnx } from "./run-onnx.js";

export const runHelp = `attngraph run <case.json> [--executor cpu] [--tap <node>]... [--tap all] [--fused-qkv] [--explain]
  Runs one golden case (an attention case, a golden-flex case, or a golden-train case: block, mha-backward, train — its forward pass) and
  prints the tapped tensors (default: the outputs) in PyTorch's format.
attngraph run <model.onnx> --inputs <inputs.json> [--executor cpu] [--tap <name|glob>]... [--explain]
  Imports an ONNX model for the shapes of the inputs and runs it; a tap names an ONNX node or value, an alias such as
  /h.0/attn/weights, a last segment (weights: every attention's weights [B, H, T, T]) or a glob.
attngraph run <repro.json> [--ops <module.js>]
  Replays a repro written by \`attngraph diff\` on the two executors it names; exit status 1 while they still disagree.`;

export const runCommand: CommandLine = {
  flags: ["executor", "tap", "fused-qkv", "explain", "threads", "ops", "inputs", "dims"],
  operand: "<case.json | model.onnx | repro.json>",
};

export interface RunArgs {
  readonly positionals: string[];
  /** Undefined when not given (cpu), so a repro, which names its own executors, can refuse it. */
  readonly executor: string | undefined;
  readonly tap: string[];
  readonly fusedQkv: boolean;
  readonly explain: boolean;
  readonly ops?: string;
  readonly threads?: number | undefined;
  readonly inputs?: string;
  readonly dims?: string;
}

export async function run(args: RunArgs, io: IO): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new UsageError(`missing <case.json>\n${runHelp}`);
  if (isOnnxPath(file)) {
    refuseFlags("run", "with an ONNX model (its own nodes, no repro ops, no fused-qkv choice)", {
      "--ops": args.ops,
      "--fused-qkv": args.fusedQkv || undefined,
    });
    return await runOnnx(
      {
        file,
        executor: args.executor ?? DEFAULT_EXECUTOR,
        tap: args.tap,
        explain: args.explain,
        threads: args.threads,
        inputs: args.inputs,
        dims: args.dims,
      },
      io,
    );
  }
  refuseFlags("run", "with a JSON case or repro (--inputs and --dims are for an ONNX model)", {
    "--inputs": args.inputs,
    "--dims": args.dims,
  });
  // Read once: `cat case.json | attngraph run /dev/stdin` has one read to give.
  const doc = readDocument(file);
  expectKind(doc, "run", ["case", "repro"]);
  if (doc.kind === "repro") {
    const idle = {
      "--executor": args.executor,
      "--tap": args.tap,
      "--fused-qkv": args.fusedQkv,
      "--explain": args.explain,
      "--threads": args.threads,
    };
    refuseFlags("run", "with a repro: it replays on the two executors it names, and prints its one node", idle);
    return await replay(doc, args.ops ? await loadUserOps(args.ops) : undefined, io);
  }
  refuseFlags("run", "with a golden case: it uses the built-in ops (--ops is for replaying a repro, and for diff)", {
    "--ops": args.ops,
  });
  const executor = args.executor ?? DEFAULT_EXECUTOR;
  const loaded = caseOf(doc);
  let graph: OpGraph;
  let weights: Readonly<Record<string, AnyTensor>>;
  let inputs: Readonly<Record<string, AnyTensor>>;
  if (loaded.format === "train") {
    ({ graph, weights, inputs } = buildTrainCase(loaded.case));
  } else if (loaded.format === "models") {
    refuseFlags("run", "with a golden-models case: the model's own layout decides its projections", {
      "--fused-qkv": args.fusedQkv,
    });
    ({ graph, weights, inputs } = modelCaseSubject(loaded.case));
  } else if (loaded.format === "flex") {
    refuseFlags("run", "with a golden-flex case: it builds the variant's attention core from q, k, v in heads layout", {
      "--fused-qkv": args.fusedQkv,
    });
    const gc = flexGraphCase(loaded.case);
    ({ graph, inputs } = gc);
    weights = gc.weights();
  } else {
    const c = loaded.case;
    graph = buildAttention(c.config, { keyPaddingMask: "keyPaddingMask" in c.inputs, fusedQkv: args.fusedQkv });
    weights = attentionWeights(c.config, c.weights, { fusedQkv: args.fusedQkv });
    inputs = c.inputs;
  }
  const session = await compile(graph, {
    executors: executorsFor(executor, undefined, { threads: args.threads }),
    weights,
  });
  if (args.explain) io.out(`${session.explain()}\n`);
  const taps = args.tap.length ? args.tap : [...graph.outputs];
  const tapped: { node: string; tensor: Tensor }[] = [];
  const sub = session.tap(taps.includes("all") ? () => true : taps).subscribe((e) => tapped.push(e));
  try {
    await session.run(inputs);
  } finally {
    sub.unsubscribe();
    await session.dispose();
  }
  io.out(`${clip(loaded.case.name)} on ${clip(executor)}`);
  for (const { node, tensor } of tapped) io.out(`\n${node} [${tensor.shape.join(", ")}]\n${tensor.toString()}`);
  return 0;
}
