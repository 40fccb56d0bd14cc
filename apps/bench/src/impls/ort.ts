// onnxruntime peers: onnxruntime-web on its wasm execution provider, and onnxruntime-node (native, CPU EP), both
// running the ONNX model of the same attention (../onnx/attention-model.ts), block (../onnx/block-model.ts) or decoding
// step (../onnx/decode-model.ts).
// onnxruntime-web bundles its own copy of onnxruntime-common, so the two keep separate `env`s in one process.
import { buildAttentionModel, ONNX_INPUT, ONNX_OUTPUT } from "../onnx/attention-model.js";
import { buildBlockModel } from "../onnx/block-model.js";
import { buildDecodeMhaModel } from "../onnx/decode-mha-model.js";
import { buildDecodeModel, decodePast, ONNX_PAST_KEY, ONNX_PAST_VALUE } from "../onnx/decode-model.js";
import { isTrainKind, type BenchProblem, type ProblemKind } from "../problem.js";
import type { Impl, Runner, SetupOptions } from "./types.js";

/** What both packages' InferenceSession and Tensor look like, as far as the harness uses them. */
interface OrtLike {
  readonly Tensor: new (type: "float32", data: Float32Array, dims: readonly number[]) => unknown;
  readonly InferenceSession: {
    create(model: Uint8Array, options: Record<string, unknown>): Promise<{
      run(feeds: Record<string, unknown>): Promise<Record<string, { readonly data: unknown }>>;
      release(): Promise<void>;
    }>;
  };
}

/** The inference problems (onnxruntime-web and -node are inference runtimes: no training problems). */
type ForwardProblem = Extract<BenchProblem, { kind: "attention" | "block" | "decode" }>;

/** Why an onnxruntime peer does not run a problem (the training ones), or undefined. */
export function ortUnsupported(kind: ProblemKind): string | undefined {
  return isTrainKind(kind) ? "no training: onnxruntime-web/-node run inference only" : undefined;
}

/**
 * How the decode step is written for onnxruntime: "concat" (plain opset-17 ops, past and new keys and values joined by
 * Concat: decode-model.ts) or "mha" (the contrib MultiHeadAttention with past inputs: decode-mha-model.ts).
 */
export type DecodeModel = "concat" | "mha";

/** The ONNX model of the problem, built per shape (weights included). */
export function buildModel(p: ForwardProblem, decodeModel: DecodeModel = "concat"): Uint8Array {
  if (p.kind === "decode") return decodeModel === "mha" ? buildDecodeMhaModel(p) : buildDecodeModel(p);
  return p.kind === "block" ? buildBlockModel(p) : buildAttentionModel(p);
}

/** The model's inputs for the problem, as data and dims: x, and for decode the cached past keys and values. */
export function modelFeeds(p: ForwardProblem): Record<string, { data: Float32Array; dims: number[] }> {
  const { b, t, d, h } = p.shape;
  if (p.kind !== "decode") return { [ONNX_INPUT]: { data: p.x, dims: [b, t, d] } };
  const past = decodePast(p); // once per shape, outside the timed region
  return {
    [ONNX_INPUT]: { data: p.token, dims: [b, 1, d] },
    [ONNX_PAST_KEY]: { data: past.key, dims: [b, h, t, d / h] },
    [ONNX_PAST_VALUE]: { data: past.value, dims: [b, h, t, d / h] },
  };
}

async function ortRunner(ort: OrtLike, problem: BenchProblem, sessionOptions: Record<string, unknown>, threads: number, decodeModel: DecodeModel): Promise<Runner> {
  if (isTrainKind(problem.kind)) throw new Error(ortUnsupported(problem.kind));
  const p = problem as ForwardProblem;
  const session = await ort.InferenceSession.create(buildModel(p, decodeModel), sessionOptions);
  const feeds = Object.fromEntries(Object.entries(modelFeeds(p)).map(([name, { data, dims }]) => [name, new ort.Tensor("float32", data, dims)]));
  return {
    threads,
    async run() {
      const out = await session.run(feeds);
      const data = out[ONNX_OUTPUT]?.data;
      if (!(data instanceof Float32Array)) throw new Error(`output ${ONNX_OUTPUT} is not float32 data on the CPU`);
      return data;
    },
    dispose: () => session.release(),
  };
}

/** Why the contrib-op variants run nothing but decode. */
const MHA_DECODE_ONLY = "decode only (the contrib MultiHeadAttention with past inputs)";

/**
 * onnxruntime-web or -node as a peer: `ort-web` / `ort-node`, or with the decode step as the contrib MultiHeadAttention
 * (`ort-web-mha` / `ort-node-mha`: decode only, run when named, for comparison with the plain model).
 */
export function ortImpl(runtime: "web" | "node", decodeModel: DecodeModel = "concat"): Impl {
  const mha = decodeModel === "mha";
  return {
    name: `ort-${runtime}${mha ? "-mha" : ""}`,
    family: "peer",
    ...(mha ? { onlyWhenNamed: true } : {}),
    unsupported: mha ? (kind) => (kind === "decode" ? undefined : MHA_DECODE_ONLY) : ortUnsupported,
    async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
      if (mha && p.kind !== "decode") throw new Error(MHA_DECODE_ONLY);
      if (runtime === "web") {
        const ort = await import("onnxruntime-web");
        // Read when the wasm module starts (the first session); later sessions in this process run with the same
        // count. Without it, onnxruntime-web picks min(4, cores / 2) threads.
        ort.env.wasm.numThreads = options.threads;
        ort.env.logLevel = "error";
        const opts = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
        return ortRunner(ort as unknown as OrtLike, p, opts, ort.env.wasm.numThreads ?? options.threads, decodeModel);
      }
      const ort = await import("onnxruntime-node");
      const opts = {
        executionProviders: ["cpu"],
        graphOptimizationLevel: "all",
        intraOpNumThreads: options.threads,
        interOpNumThreads: 1,
        executionMode: "sequential",
        logSeverityLevel: 3,
      };
      return ortRunner(ort as unknown as OrtLike, p, opts, options.threads, decodeModel);
    },
  };
}

export const ortWebImpl: Impl = ortImpl("web");
export const ortNodeImpl: Impl = ortImpl("node");
