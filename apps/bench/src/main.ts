// `pnpm bench`: parse the command line, run, print the report, write the JSON. Progress goes to stderr, the report to
// stdout. Exit status: 0, 1 on an output mismatch or a failed attngraph executor, 2 on a bad command line.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { parseCli, USAGE, UsageError } from "./cli.js";
import { flexMain } from "./flex/main.js";
import { gpt2Main } from "./gpt2/main.js";
import { allImpls } from "./impls/index.js";
import type { Impl } from "./impls/types.js";
import { exitStatus, formatReport } from "./report.js";
import { runBench } from "./run.js";

export interface IO {
  out(line: string): void;
  err(line: string): void;
}

const processIO: IO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export async function main(
  argv: readonly string[],
  io: IO = processIO,
  impls: readonly Impl[] = allImpls(),
): Promise<number> {
  let options;
  try {
    options = parseCli(argv);
    if (options.help) {
      io.out(USAGE);
      return 0;
    }
    if (options.problem === "flex") return await flexMain(options, io);
    if (options.problem === "gpt2") return await gpt2Main(options, io);
    const known = impls.map((i) => i.name);
    const unknown = options.impls?.filter((n) => !known.includes(n)) ?? [];
    if (unknown.length)
      throw new UsageError(`--impl: unknown ${unknown.map((n) => `"${n}"`).join(", ")}; known: ${known.join(", ")}`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`bench: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  // Named implementations run (or are an "unavailable" row) whatever the problem; by default those that can run it,
  // less the variants that run only when named.
  const selected = options.impls
    ? options.impls.map((n) => impls.find((i) => i.name === n)!)
    : impls.filter((i) => !i.onlyWhenNamed && i.unsupported?.(options.problem) === undefined);
  const results = await runBench(options, selected, (line) => io.err(`  ${line}`));
  io.out(formatReport(results));
  const path = resolve(options.json);
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  io.out(`\nwrote ${path}`);
  return exitStatus(results);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Every wasm module (attngraph's, onnxruntime-web's, tfjs-wasm's) compiled by V8's optimizing tier from the start. By
  // default V8 runs a module's baseline code first and optimizes it in the background: a 14 MB onnxruntime-web module
  // was still on baseline code for the first shape's rows (2,6,8,2: 66–78 µs a run, 22–26 µs once optimized), which
  // made the peer look slower than it is. A flag set before any module is compiled; the tests import `main` unset.
  setFlagsFromString("--no-liftoff");
  process.exitCode = await main(process.argv.slice(2));
}
