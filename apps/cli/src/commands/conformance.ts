import { formatResult, formatSummary, runConformance } from "../conformance/runner.js";
import { executorsFor } from "../executors.js";
import { UsageError, type IO } from "../io.js";

export const conformanceHelp = `attngraph conformance <dir> [--executor cpu] [--fused-qkv] [--tap all]
  Runs every *.json golden case in <dir> on the executor(s) and compares every expected tensor.
  Prints one line per case and "N passed, N failed"; exit status 1 if any failed.
  --tap all   also taps every node (the numbers must not change).`;

export async function conformance(args: { positionals: string[]; executor: string; fusedQkv: boolean; tap: string[] }, io: IO): Promise<number> {
  const dir = args.positionals[0];
  if (!dir) throw new UsageError(`missing <dir>\n${conformanceHelp}`);
  if (args.tap.some((t) => t !== "all")) throw new UsageError("conformance takes only --tap all");
  executorsFor(args.executor); // fail on an unknown name before running anything
  const summary = await runConformance(dir, {
    executors: () => executorsFor(args.executor),
    fusedQkv: args.fusedQkv,
    tapAll: args.tap.includes("all"),
    onResult: (r) => io.out(formatResult(r)),
  });
  io.out(formatSummary(summary));
  return summary.failed === 0 && summary.passed > 0 ? 0 : 1;
}
