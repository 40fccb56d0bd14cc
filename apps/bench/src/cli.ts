// Command-line arguments of `pnpm bench`. Parsing only: which implementations exist is main's business.
import { parseArgs } from "node:util";
import { COPY_SHAPE, PROBLEM_KINDS, type ProblemKind } from "./problem.js";
import { FLEX_PARTS, FLEX_VARIANTS, type FlexPart, type FlexVariant } from "./flex/variants.js";
import {
  DEFAULT_BLOCK_SHAPES,
  DEFAULT_DECODE_SHAPES,
  DEFAULT_FLEX_SHAPES,
  DEFAULT_SHAPES,
  DEFAULT_TRAIN_BLOCK_SHAPES,
  flexShape,
  parseShape,
  type BenchShape,
} from "./shapes.js";

/** Each problem's shapes when no --shape is given (train-copy's is fixed: see parseCli). */
const DEFAULTS: Readonly<Record<ProblemKind, readonly BenchShape[]>> = {
  attention: DEFAULT_SHAPES,
  block: DEFAULT_BLOCK_SHAPES,
  "train-block": DEFAULT_TRAIN_BLOCK_SHAPES,
  "train-copy": [COPY_SHAPE],
  decode: DEFAULT_DECODE_SHAPES,
  flex: DEFAULT_FLEX_SHAPES,
  gpt2: [], // src/gpt2/run.ts has its own cases; --t picks lengths
};

export interface BenchOptions {
  /**
   * What one run computes: a forward of the attention alone (default) or of the whole pre-norm transformer block, one
   * training step of the block or of the copy-task model, or one decoding step (one new token over a KV cache).
   */
  readonly problem: ProblemKind;
  /** Implementation names in the order given; undefined = every known one. */
  readonly impls: readonly string[] | undefined;
  readonly shapes: readonly BenchShape[];
  /** `--shape` was given but does not apply (train-copy's shape is fixed); the report says so. */
  readonly shapeIgnored: boolean;
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
  /** `--problem flex`: the variants and parts asked for (undefined: all). */
  readonly variants?: readonly FlexVariant[];
  readonly parts?: readonly FlexPart[];
  /** `--problem gpt2`: the lengths of --t (undefined: the default cases), the phases, and tokens to generate. */
  readonly lengths?: readonly number[];
  readonly phases?: readonly ("prefill" | "decode")[];
  readonly generate?: number;
}

/** A bad command line: main prints it with the usage and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const USAGE = `usage: pnpm bench [options]

One causal multi-head attention forward with out_proj (float32) per shape, or with --problem block one pre-norm
transformer block forward, with --problem train-block / train-copy one training step, or with --problem decode one
new token over a KV cache, on every attngraph executor and on the peers (tfjs-cpu, tfjs-wasm, ort-web, ort-node;
training: the tfjs ones; decode: the ort ones), same weights and input for all, outputs (training: losses) checked
against each other.

  --problem P        attention (default): causal MHA with out_proj; block: LayerNorm, causal MHA (fused qkv_proj),
                     residual, LayerNorm, GELU MLP (4·d), residual; train-block: one step (forward, backward, Adam
                     lr 1e-3) of the block on L = sum(output ⊙ gradOutput); train-copy: one step of the worked example's
                     copy-task model (vocab 10, E 32, 4 heads, T 8, batch 32; cross-entropy mean; shape fixed);
                     decode: the attention's one new token [b, 1, d] over a cache of T positions (T of --shape);
                     gpt2: GPT-2 small (124M parameters, random weights in Hugging Face's layout) prompts of T
                     tokens and one token after T cached, then a 16-token greedy generation; impls wasm, ort-web
                     (cpu, ort-node when named);
                     flex: attention variants (causal, causal-builtin, alibi, user-mask, softcap, document, window
                     128) as a whole layer (d 768, 12 heads) and as the core from q, k, v [b, 12, T, 64]; impls cpu,
                     wasm, ort-web, ort-node (webgpu when named)
  --impl a,b,...     implementations to run (default: all that can run the problem), e.g. --impl cpu,tfjs-cpu;
                     training problems also: tfjs-cpu-stock, tfjs-wasm-stock (tfjs's stock matMul gradients; only
                     when named); decode also: ort-web-mha, ort-node-mha (onnxruntime's contrib
                     MultiHeadAttention with past inputs instead of Concat) and ort-web-export, ort-node-export
                     (attngraph's decode graph through exportOnnx); only when named; attention and block also:
                     wasm-onnx, cpu-onnx (the ONNX file the ort rows run, imported by importOnnx; only when named);
                     WebGPU peers, only
                     when named: tfjs-webgpu (attention, block), ort-webgpu (attention, block, decode): in Node
                     through the webgpu package; on SwiftShader (VK_ICD_FILENAMES, no GPU) correctness only
  --shape b,T,d,h    a shape to run (repeatable; default: 2,6,8,2  4,128,256,8  1,128,768,12  1,512,768,12  1,1024,768,12;
                     with --problem block: 1,128,768,12  1,512,768,12; train-block: 1,512,768,12; decode (T = cache
                     length): 2,6,8,2  1,128,768,12  1,512,768,12  1,1024,768,12; ignored by train-copy, whose shape
                     is the worked example's 32,8,32,4)
  --t T,...          flex only: sequence lengths (repeatable), each the shape 1,T,768,12 (default 1024); gpt2: the
                     prompt lengths and cache lengths (default prefill 128, 512, 1024; decode 128, 512)
  --phase a,b        gpt2 only: prefill, decode or both (default both)
  --generate N       gpt2 only: tokens of the greedy generation after a prompt of 128, timed from nothing compiled
                     (default 16; 0: none)
  --variant a,b      flex only: variants to run (default all)
  --part a,b         flex only: layer, core or both (default both)
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
  if (!/^[0-9]+$/.test(text) || Number(text) < min)
    throw new UsageError(`--${flag} "${text}": expected an integer >= ${min}`);
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
        t: { type: "string", multiple: true },
        variant: { type: "string" },
        part: { type: "string" },
        phase: { type: "string" },
        generate: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const v = parsed.values;
  const impls = v.impl
    ?.flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (v.impl && impls!.length === 0) throw new UsageError("--impl: expected a comma-separated list of names");
  const problem = (v.problem ?? "attention") as ProblemKind;
  if (!PROBLEM_KINDS.includes(problem))
    throw new UsageError(
      `--problem "${v.problem}": expected ${PROBLEM_KINDS.slice(0, -1).join(", ")} or ${PROBLEM_KINDS.at(-1)}`,
    );
  if (problem !== "flex")
    for (const f of ["variant", "part"] as const)
      if (v[f] !== undefined) throw new UsageError(`--${f}: only with --problem flex`);
  if (problem !== "flex" && problem !== "gpt2" && v.t !== undefined)
    throw new UsageError("--t: only with --problem flex or gpt2");
  if (problem !== "gpt2")
    for (const f of ["phase", "generate"] as const)
      if (v[f] !== undefined) throw new UsageError(`--${f}: only with --problem gpt2`);
  if (problem === "gpt2" && v.shape !== undefined)
    throw new UsageError("--shape: --problem gpt2 has GPT-2 small's sizes; --t picks the lengths");
  const listOf = <T extends string>(flag: string, text: string | undefined, known: readonly T[]): T[] | undefined => {
    if (text === undefined) return undefined;
    const items = [
      ...new Set(
        text
          .split(",")
          .map((x) => x.trim())
          .filter((x) => x.length > 0),
      ),
    ];
    const bad = items.filter((x) => !known.includes(x as T));
    if (items.length === 0 || bad.length)
      throw new UsageError(`--${flag} "${text}": expected a comma-separated list of ${known.join(", ")}`);
    return items as T[];
  };
  const variants = listOf("variant", v.variant, FLEX_VARIANTS);
  const parts = listOf("part", v.part, FLEX_PARTS);
  const phases = listOf("phase", v.phase, ["prefill", "decode"] as const);
  const generate = v.generate === undefined ? undefined : positiveInt("generate", v.generate, 0);
  let shapes: BenchShape[];
  try {
    const ts = v.t?.flatMap((x) => x.split(",")).map((x) => flexShape(x.trim()));
    shapes = [...(v.shape ? v.shape.map(parseShape) : []), ...(ts ?? [])];
    if (shapes.length === 0) shapes = [...DEFAULTS[problem]];
    if (problem === "train-copy") shapes = [COPY_SHAPE]; // the worked example's model and batch, whatever --shape says
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const budget = v.budget ?? "10";
  if (!/^[0-9]+(\.[0-9]+)?$/.test(budget) || Number(budget) <= 0)
    throw new UsageError(`--budget "${budget}": expected a number of seconds > 0`);
  return {
    problem,
    impls: impls ? [...new Set(impls)] : undefined,
    shapes,
    shapeIgnored: problem === "train-copy" && v.shape !== undefined,
    threads: positiveInt("threads", v.threads ?? "1", 1),
    json: v.json ?? "bench-results.json",
    runs: positiveInt("runs", v.runs ?? "10", 1),
    warmup: positiveInt("warmup", v.warmup ?? "2", 0),
    budgetS: Number(budget),
    interleave: v.interleave ?? false,
    help: v.help ?? false,
    ...(variants ? { variants } : {}),
    ...(parts ? { parts } : {}),
    ...(problem === "gpt2" && v.t !== undefined ? { lengths: shapes.map((s) => s.t) } : {}),
    ...(phases ? { phases } : {}),
    ...(generate === undefined ? {} : { generate }),
  };
}
