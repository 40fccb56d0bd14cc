import { formatResult, formatSummary, runConformance } from "../conformance/runner.js";
import { executorsFor } from "../executors.js";
import type { CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";

export const conformanceCommand: CommandLine = { flags: ["executor", "tap", "fused-qkv", "threads"], operand: "<dir>" };

export const conformanceHelp = `attngraph conformance <dir> [--executor cpu] [--fused-qkv] [--tap all|none]
  Runs every *.json golden case in <dir> on the executor(s) and compares every expected tensor.
  Prints one line per case and "N passed, N failed"; exit status 1 if any failed.
  --tap all   taps every node (the numbers must not change)
  --tap none  taps nothing, so the middle may be fused away; compares the outputs only`;

export async function conformance(
  args: { positionals: string[]; executor: string; fusedQkv: boolean; tap: string[]; threads?: number | undefined },
  io: IO,
): Promise<number> {
  const dir = args.positionals[0];
  if (!dir) throw new UsageError(`missing <dir>\n${conformanceHelp}`);
  const tap = args.tap.length === 0 ? "expected" : args.tap[0];
  if (args.tap.length > 1 || (tap !== "expected" && tap !== "all" && tap !== "none"))
    throw new UsageError("conformance takes --tap all or --tap none");
  // With --threads, every call that can be split is (parallelWork 0): the golden cases are small, and a pass must
  // mean the threaded kernels computed them.
  const executorOptions = {
    threads: args.threads,
    ...(args.threads !== undefined && args.threads > 1 ? { parallelWork: 0 } : {}),
  };
  executorsFor(args.executor, undefined, executorOptions); // fail on an unknown name before running anything
  const summary = await runConformance(dir, {
    executors: () => executorsFor(args.executor, undefined, executorOptions),
    fusedQkv: args.fusedQkv,
    tap,
    onResult: (r) => io.out(formatResult(r)),
  });
  io.out(formatSummary(summary));
  return summary.failed === 0 && summary.passed > 0 ? 0 : 1;
}
