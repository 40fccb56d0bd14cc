import { AttnGraphError, clip } from "@attngraph/tensor";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { conformance, conformanceCommand, conformanceHelp } from "./commands/conformance.js";
import { demo, demoCommand } from "./commands/demo.js";
import { diff, diffCommand, diffHelp } from "./commands/diff.js";
import { exportCommand, exportHelp, exportModel } from "./commands/export.js";
import { importCommand, importHelp, importModel } from "./commands/import.js";
import { run, runCommand, runHelp } from "./commands/run.js";
import { train, trainCommand, trainHelp } from "./commands/train.js";
import { DEFAULT_EXECUTOR, parseThreads } from "./executors.js";
import { checkCommandLine, type CommandLine } from "./flags.js";
import { processIO, UsageError, type IO } from "./io.js";

const help = `usage: attngraph <command> [options]

  demo [block]                 causal multi-head attention of the worked examples, every intermediate tensor printed
                               (block: their pre-norm transformer block, each intermediate compared with PyTorch)
  run <case.json>              run one golden case (attention or golden-train), print tapped tensors;
                               run <model.onnx> --inputs <inputs.json> runs an ONNX model (--tap weights: its
                               attention weights); run <repro.json> replays the node a diff cut out
  diff <case.json> --executors cpu,wasm
                               every node's value on each executor against the first one's, the first disagreement
                               written out as a repro
  conformance <dir>            run every golden case in <dir>, "N passed, N failed"
  export <case.json | graph.json> -o <model.onnx>
                               the graph and its weights as an ONNX model (opset 17, contrib ops with --contrib auto)
  import <model.onnx>          what the importer makes of an ONNX model: ops, attention chains, folded nodes
  train copy                   train the worked example's model on the copy task (Adam), then print each head's pattern

${conformanceHelp}

${trainHelp}

${runHelp}

${diffHelp}

${exportHelp}

${importHelp}

Options of demo, run, conformance and train:
  --executor <name>[,<name>...]  executors in preference order (default: cpu)
Options of every command but export:
  --threads <n>                  threads of the wasm executor (1 to 16, default 1; its workers need SharedArrayBuffer,
                                 and it says when it runs fewer); refused when no executor is wasm
A command refuses an option it does not take (exit status 2), naming it and listing its own; so does run, diff or
export for an option that does nothing with the file given (--dims with a golden case). A file that cannot be read or
written is one line naming it and the reason (exit status 1).`;

/** The options of every command, parsed together: an option may come before the command's name. */
const options = {
  executor: { type: "string" },
  tap: { type: "string", multiple: true, default: [] as string[] },
  "fused-qkv": { type: "boolean", default: false },
  explain: { type: "boolean", default: false },
  steps: { type: "string" },
  lr: { type: "string" },
  seed: { type: "string" },
  dropout: { type: "string" },
  init: { type: "string" },
  executors: { type: "string" },
  threads: { type: "string" },
  tolerance: { type: "string" },
  repro: { type: "string" },
  ops: { type: "string" },
  dims: { type: "string" },
  output: { type: "string", short: "o" },
  contrib: { type: "string" },
  weights: { type: "string" },
  inputs: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies ParseArgsConfig["options"];

/** What each command takes; any other option is a usage error naming it (see flags.ts). */
const commands = new Map<string, CommandLine>([
  ["demo", demoCommand],
  ["run", runCommand],
  ["diff", diffCommand],
  ["conformance", conformanceCommand],
  ["export", exportCommand],
  ["import", importCommand],
  ["train", trainCommand],
]);

const shortOf = (flag: string): string | undefined => (options as Record<string, { short?: string }>)[flag]?.short;

/** The given string options, absent ones left out (exactOptionalPropertyTypes). */
function pick(values: Record<string, unknown>, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(keys.filter((k) => typeof values[k] === "string").map((k) => [k, values[k] as string]));
}

/** Runs the CLI and returns the exit status. Errors become one readable line, never a stack trace. */
export async function main(argv: readonly string[], io: IO = processIO): Promise<number> {
  try {
    const { values, positionals, tokens } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      tokens: true,
      options,
    });
    const [command, ...rest] = positionals;
    if (values.help || !command) {
      io.out(help);
      return command || values.help ? 0 : 2;
    }
    const line = commands.get(command);
    if (!line) throw new UsageError(`unknown command "${clip(command)}"\n${help}`);
    checkCommandLine(command, line, tokens, shortOf);
    const threads = parseThreads(values.threads);
    const common = {
      positionals: rest,
      executor: values.executor ?? DEFAULT_EXECUTOR,
      tap: values.tap,
      fusedQkv: values["fused-qkv"],
      explain: values.explain,
      threads,
    };
    switch (command) {
      case "demo":
        return await demo(common, io);
      case "conformance":
        return await conformance(common, io);
      case "run":
        // The executor as given: a repro names its own, and refuses --executor.
        return await run({ ...common, executor: values.executor, ...pick(values, ["ops", "inputs", "dims"]) }, io);
      case "diff":
        return await diff(
          {
            positionals: rest,
            executors: values.executors,
            tap: values.tap,
            fusedQkv: values["fused-qkv"],
            threads,
            ...pick(values, ["tolerance", "repro", "ops", "dims", "seed"]),
          },
          io,
        );
      case "export":
        return await exportModel(
          {
            positionals: rest,
            fusedQkv: values["fused-qkv"],
            explain: values.explain,
            ...pick(values, ["output", "contrib", "weights", "seed", "dims", "ops"]),
          },
          io,
        );
      case "import":
        return await importModel(
          { positionals: rest, explain: values.explain, ...pick(values, ["inputs", "dims"]) },
          io,
        );
      case "train":
        return await train({ ...common, ...pick(values, ["steps", "lr", "seed", "dropout", "init"]) }, io);
      default:
        throw new UsageError(`unknown command "${clip(command)}"\n${help}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`attngraph: ${e.message}`);
      return 2;
    }
    if (e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS")) {
      // Node's parseArgs quotes the user's option (twice, for an unknown one): cut, it could be megabytes.
      io.err(`attngraph: ${clip(e.message, 400)}`);
      return 2;
    }
    if (AttnGraphError.isInstance(e)) {
      io.err(`attngraph: ${e.name}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
