// `pnpm bench --problem flex`: its implementations, and the part of main that runs it (its rows carry a variant and a
// part, so it has its own runner and report; the command line, timing and checks are the other problems').
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError, type BenchOptions } from "../cli.js";
import { attngraphExecutors } from "../impls/attngraph.js";
import { attngraphFlexImpl } from "./attngraph.js";
import { ortFlexImpl } from "./ort.js";
import { flexExitStatus, formatFlexReport } from "./report.js";
import { runFlexBench } from "./run.js";
import type { FlexImpl } from "./types.js";

/** In table order; webgpu only when named (it needs an adapter). */
export function flexImpls(): FlexImpl[] {
  const attngraph = Object.keys(attngraphExecutors).map((n) => ({
    ...attngraphFlexImpl(n),
    ...(n === "webgpu" ? { onlyWhenNamed: true } : {}),
  }));
  return [...attngraph, ortFlexImpl("web"), ortFlexImpl("node")];
}

/** Runs the flex problem, prints its report, writes its JSON; the exit status. Throws UsageError on an unknown impl. */
export async function flexMain(
  options: BenchOptions,
  io: { out(line: string): void; err(line: string): void },
  impls: readonly FlexImpl[] = flexImpls(),
): Promise<number> {
  const unknown = options.impls?.filter((n) => !impls.some((i) => i.name === n)) ?? [];
  if (unknown.length)
    throw new UsageError(
      `--impl: ${unknown.map((n) => `"${n}"`).join(", ")} cannot run --problem flex; it runs ${impls.map((i) => i.name).join(", ")}`,
    );
  const selected = options.impls
    ? options.impls.map((n) => impls.find((i) => i.name === n)!)
    : impls.filter((i) => !i.onlyWhenNamed);
  const results = await runFlexBench(
    options,
    selected,
    { ...(options.variants ? { variants: options.variants } : {}), ...(options.parts ? { parts: options.parts } : {}) },
    (line) => io.err(`  ${line}`),
  );
  io.out(formatFlexReport(results));
  const path = resolve(options.json);
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  io.out(`\nwrote ${path}`);
  return flexExitStatus(results);
}
