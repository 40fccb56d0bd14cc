import { diffExecutors } from "@attngraph/tools";
import { AttnGraphError, clip, type Tolerance } from "@attngraph/tensor";
import { basename, join } from "node:path";
import { loadDiffSubject } from "../diff-subject.js";
import { formatDiff } from "../diff-report.js";
import { readDocument } from "../document.js";
import { executorsFor } from "../executors.js";
import { isDirectory, listJson, writeFile } from "../files.js";
import type { CommandLine } from "../flags.js";
import { UsageError, type IO } from "../io.js";
import { loadUserOps } from "../user-ops.js";

export const diffHelp = `attngraph diff <case.json | graph.json | repro.json | dir> --executors cpu,wasm[,webgpu] [--tap all|none|<node>...]
                [--tolerance abs[,rel]] [--repro <file>] [--ops <module.js>] [--dims B=2,T=8] [--seed n] [--fused-qkv]
  Runs the same graph, inputs and weights on each executor and prints, per node, the largest absolute and relative
  difference against the first executor. A golden case with expected gradients is diffed with its backward graph.
  The first node out of tolerance is marked and written alone as a repro (default <node>.<executor>.repro.json) that
  \`attngraph run <repro>\` replays. A folder diffs every case in it, one line each while they agree (repros go to
  the --repro folder, default "."). Exit status 1 when a node disagrees or a run fails.
  --tap all        every node a step of its own (default): a wrong kernel shows at its own node
  --tap none       the outputs only, lowered as a user runs them (fused)
  --tolerance      |got - ref| <= abs + rel * |ref| (default 1e-4,1e-4)
  --ops            a module exporting \`ops\` (defineOp results) and \`kernels\` ({ cpu: { kind: kernel }, ... })
  --dims, --seed   a graph document's symbolic dim sizes and the seed of its random inputs and weights`;

export const diffCommand: CommandLine = {
  flags: ["executors", "tap", "tolerance", "repro", "ops", "dims", "seed", "fused-qkv", "threads"],
  operand: "<case.json | graph.json | repro.json | dir>",
};

export interface DiffArgs {
  readonly positionals: string[];
  readonly executors: string | undefined;
  readonly tap: string[];
  readonly fusedQkv: boolean;
  readonly tolerance?: string;
  readonly repro?: string;
  readonly ops?: string;
  readonly dims?: string;
  readonly seed?: string;
  /** The wasm executor's threads (`--threads`). */
  readonly threads?: number | undefined;
}

export async function diff(args: DiffArgs, io: IO): Promise<number> {
  const target = args.positionals[0];
  if (!target) throw new UsageError(`missing <case.json | graph.json | repro.json | dir>\n${diffHelp}`);
  if (!args.executors)
    throw new UsageError(`diff needs --executors with two names or more, e.g. --executors cpu,wasm\n${diffHelp}`);
  const names = args.executors.split(",").map((s) => s.trim());
  if (names.length < 2)
    throw new UsageError(`--executors: a diff needs two executors or more, got "${clip(args.executors)}"`);
  const seed = args.seed === undefined ? undefined : Number(args.seed);
  if (seed !== undefined && !Number.isInteger(seed))
    throw new UsageError(`--seed: expected an integer, got "${clip(args.seed!)}"`);
  const tolerance = args.tolerance ? parseTolerance(args.tolerance) : undefined;
  const ops = args.ops ? await loadUserOps(args.ops) : undefined;
  // Made once: a folder of cases shares them (a WebGPU device is slow to get), runs never share state.
  const executors = executorsFor(args.executors, ops, { threads: args.threads });
  const tap =
    args.tap.length === 0 || (args.tap.length === 1 && args.tap[0] === "all")
      ? "all"
      : args.tap.length === 1 && args.tap[0] === "none"
        ? "none"
        : args.tap;
  // quiet: one file of a folder (one line while it agrees, and flags apply to the files they fit).
  const one = async (
    file: string,
    reproPath: (node: string, executor: string) => string,
    quiet: boolean,
  ): Promise<boolean> => {
    const options = {
      fusedQkv: args.fusedQkv,
      strict: !quiet,
      ...(args.dims ? { dims: args.dims } : {}),
      ...(seed === undefined ? {} : { seed }),
      ...(ops ? { registry: ops.registry } : {}),
    };
    const subject = loadDiffSubject(readDocument(file), options);
    const result = await diffExecutors(subject.graph, {
      executors,
      inputs: subject.inputs,
      weights: subject.weights,
      tap,
      ...(tolerance ? { tolerance } : {}),
    });
    if (quiet && result.ok) {
      io.out(`AGREE ${clip(subject.name)}  (${result.nodes.length} nodes)`);
      return true;
    }
    for (const line of formatDiff(result, `diff of ${clip(subject.name)}`)) io.out(line);
    const first = result.first;
    if (first?.repro) {
      const path = reproPath(first.node, first.executor);
      writeFile(
        path,
        `${JSON.stringify({ ...first.repro, source: subject.name })}\n`,
        path === args.repro ? "--repro" : undefined,
      );
      io.out(`  repro: ${path} (replay: attngraph run ${path}${args.ops ? ` --ops ${args.ops}` : ""})`);
    }
    return result.ok;
  };
  const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_");
  if (!isDirectory(target))
    return (await one(target, (node, e) => args.repro ?? `${slug(node)}.${e}.repro.json`, false)) ? 0 : 1;
  // A folder: every case, one line each while they agree, the whole table for one that does not.
  const repros = args.repro ?? ".";
  if (args.repro !== undefined && !isDirectory(args.repro))
    throw new UsageError(
      `--repro: with a folder of cases, give a folder for the repros; "${clip(args.repro)}" is not one`,
    );
  let agreed = 0;
  let failed = 0;
  for (const file of listJson(target)) {
    try {
      if (
        await one(
          file,
          (node, e) => join(repros, `${slug(basename(file, ".json"))}.${slug(node)}.${e}.repro.json`),
          true,
        )
      )
        agreed++;
      else failed++;
    } catch (e) {
      if (!AttnGraphError.isInstance(e) && !(e instanceof UsageError)) throw e;
      io.out(`ERROR ${clip(basename(file))}: ${e.message}`);
      failed++;
    }
  }
  io.out(`${agreed} agree, ${failed} disagree or failed`);
  return failed === 0 && agreed > 0 ? 0 : 1;
}

function parseTolerance(text: string): Tolerance {
  const parts = text.split(",").map((s) => Number(s.trim()));
  if (parts.length > 2 || parts.some((v) => !(v >= 0)))
    throw new UsageError(`--tolerance: expected abs[,rel] with numbers >= 0, got "${clip(text)}"`);
  return { abs: parts[0]!, rel: parts[1] ?? parts[0]! };
}
