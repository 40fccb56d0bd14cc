// Command-line arguments of `pnpm bench`. Parsing only: which implementations exist is main's business.
import { parseArgs } from "node:util";
import { PROBLEM_KINDS, type ProblemKind } from "./problem.js";
import { DEFAULT_BLOCK_SHAPES, DEFAULT_SHAPES, parseShape, type BenchShape } from "./shapes.js";

export interface BenchOptions {
  /** What one forward computes: the attention alone (default) or the whole pre-norm transformer block. */
  readonly problem: ProblemKind;
  /** Implementation names in the order given; undefined = every known one. */
  readonly impls: readonly string[] | undefined;
  readonly shapes: readonly BenchShape[];
  readonly threads: number;
  /** Where the JSON results go. */
  readonly json: string;
  readonly runs: number;
  readonly warmup: number;
  /** Per-row time budget for the timed runs, seconds (see measure.ts). */
  readonly budgetS: number;
  /** Time the implementations of a shape in alternating rounds (measureInterleaved) rather than one after another. */
  readonly interleave: boolean;
  readonly help: boolean;
}

/** A bad command line: main prints it with the usage and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const USAGE = `usage: pnpm bench [options]

One causal multi-head attention forward with out_proj (float32) per shape, or with --problem block one pre-norm
transformer block forward, on every attngraph executor and on the peers (tfjs-cpu, tfjs-wasm, ort-web, ort-node),
same weights and input for all, outputs checked against each other.

  --problem P        attention (default): causal MHA with out_proj; block: LayerNorm, causal MHA (fused qkv_proj),
                     residual, LayerNorm, GELU MLP (4·d), residual
  --impl a,b,...     implementations to run (default: all), e.g. --impl cpu,tfjs-cpu
  --shape b,T,d,h    a shape to run (repeatable; default: 2,6,8,2  4,128,256,8  1,128,768,12  1,512,768,12  1,1024,768,12;
                     with --problem block: 1,128,768,12  1,512,768,12)
  --threads N        threads for implementations that can use them (default 1)
  --runs N           timed runs per row (default 10), after warm-up
  --warmup N         warm-up runs per row (default 2; rows faster than that keep warming up for 0.5 s; 0: none)
  --budget S         seconds of timed runs per row (default 10): a row whose runs take longer stops early, but never
                     before 3 runs; the table says how many runs each median is over
  --interleave       set up every implementation of a shape first, then time them in rounds of one run each, so
                     drift on a shared machine (other work, heat) hits every row alike and the ratios hold; uses the
                     memory of all of them at once
  --json FILE        results file (default bench-results.json)
  -h, --help         this text`;

function positiveInt(flag: string, text: string, min: number): number {
  if (!/^[0-9]+$/.test(text) || Number(text) < min) throw new UsageError(`--${flag} "${text}": expected an integer >= ${min}`);
  return Number(text);
}

/** Parses the arguments after `node main.js`. Throws UsageError on anything it does not understand. */
export function parseCli(argv: readonly string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        problem: { type: "string" },
        impl: { type: "string", multiple: true },
        shape: { type: "string", multiple: true },
        threads: { type: "string" },
        json: { type: "string" },
        runs: { type: "string" },
        warmup: { type: "string" },
        budget: { type: "string" },
        interleave: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const v = parsed.values;
  const impls = v.impl?.flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
  if (v.impl && impls!.length === 0) throw new UsageError("--impl: expected a comma-separated list of names");
  const problem = (v.problem ?? "attention") as ProblemKind;
  if (!PROBLEM_KINDS.includes(problem)) throw new UsageError(`--problem "${v.problem}": expected ${PROBLEM_KINDS.join(" or ")}`);
  let shapes: BenchShape[];
  try {
    shapes = v.shape ? v.shape.map(parseShape) : [...(problem === "block" ? DEFAULT_BLOCK_SHAPES : DEFAULT_SHAPES)];
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const budget = v.budget ?? "10";
  if (!/^[0-9]+(\.[0-9]+)?$/.test(budget) || Number(budget) <= 0) throw new UsageError(`--budget "${budget}": expected a number of seconds > 0`);
  return {
    problem,
    impls: impls ? [...new Set(impls)] : undefined,
    shapes,
    threads: positiveInt("threads", v.threads ?? "1", 1),
    json: v.json ?? "bench-results.json",
    runs: positiveInt("runs", v.runs ?? "10", 1),
    warmup: positiveInt("warmup", v.warmup ?? "2", 0),
    budgetS: Number(budget),
    interleave: v.interleave ?? false,
    help: v.help ?? false,
  };
}
