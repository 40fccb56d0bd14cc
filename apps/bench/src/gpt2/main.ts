// `pnpm bench --problem gpt2`: its implementations, and the part of main that runs it (its rows carry a phase and
// the generation has rows of its own, so it has its own runner and report; the command line, timing and checks are
// the other problems').
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError, type BenchOptions } from "../cli.js";
import { attngraphExecutors } from "../impls/attngraph.js";
import { attngraphGpt2Impl } from "./attngraph.js";
import { ortGpt2Impl } from "./ort.js";
import { formatGpt2Report, gpt2ExitStatus } from "./report.js";
import { DEFAULT_GPT2_CASES, runGpt2Bench, type Gpt2Results, type Gpt2Selection } from "./run.js";
import type { Gpt2Case, Gpt2Impl } from "./types.js";

/** In table order; only wasm and ort-web unless named (cpu takes minutes per prompt; webgpu needs an adapter). */
export function gpt2Impls(): Gpt2Impl[] {
  return [...Object.keys(attngraphExecutors).map(attngraphGpt2Impl), ortGpt2Impl("web"), ortGpt2Impl("node")];
}

/** The cases the options ask for: --t lengths (prefill every one; decode those that leave room for a token), --phase. */
export function gpt2Cases(options: Pick<BenchOptions, "lengths" | "phases">, positions = 1024): Gpt2Case[] {
  const phases = options.phases ?? ["prefill", "decode"];
  const cases: Gpt2Case[] = options.lengths
    ? phases.flatMap((phase) =>
        options.lengths!.filter((t) => phase === "prefill" || t < positions).map((t) => ({ phase, t })),
      )
    : DEFAULT_GPT2_CASES.filter((c) => phases.includes(c.phase));
  const bad = cases.find((c) => c.t > positions);
  if (bad) throw new UsageError(`--t ${bad.t}: GPT-2 small has ${positions} positions`);
  return cases;
}

/** Runs the gpt2 problem, prints its report, writes its JSON; the exit status. Throws UsageError on an unknown impl. */
export async function gpt2Main(
  options: BenchOptions,
  io: { out(line: string): void; err(line: string): void },
  impls: readonly Gpt2Impl[] = gpt2Impls(),
  extra: Pick<Gpt2Selection, "sizes"> & { readonly onResults?: (r: Gpt2Results) => void } = {},
): Promise<number> {
  const unknown = options.impls?.filter((n) => !impls.some((i) => i.name === n)) ?? [];
  if (unknown.length)
    throw new UsageError(
      `--impl: ${unknown.map((n) => `"${n}"`).join(", ")} cannot run --problem gpt2; it runs ${impls.map((i) => i.name).join(", ")}`,
    );
  const selected = options.impls
    ? options.impls.map((n) => impls.find((i) => i.name === n)!)
    : impls.filter((i) => !i.onlyWhenNamed);
  const positions = extra.sizes?.positions ?? 1024;
  const results = await runGpt2Bench(
    options,
    selected,
    {
      cases: gpt2Cases(options, positions),
      ...(options.generate === undefined ? {} : { generate: options.generate }),
      ...(extra.sizes ? { sizes: extra.sizes } : {}),
    },
    (line) => io.err(`  ${line}`),
  );
  extra.onResults?.(results);
  io.out(formatGpt2Report(results));
  const path = resolve(options.json);
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  io.out(`\nwrote ${path}`);
  return gpt2ExitStatus(results);
}
