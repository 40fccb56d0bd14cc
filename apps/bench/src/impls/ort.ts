// onnxruntime peers: onnxruntime-web on its wasm execution provider, onnxruntime-node (native, CPU EP) and, when named,
// onnxruntime-web on its WebGPU execution provider, all running the ONNX model of the same attention
// (../onnx/attention-model.ts), block (../onnx/block-model.ts) or decoding step (../onnx/decode-model.ts).
// onnxruntime-web bundles its own copy of onnxruntime-common, so the two keep separate `env`s in one process; its
// WebGPU build (`onnxruntime-web/webgpu`, another bundle with its own wasm module) keeps a third.
import { buildAttentionModel, ONNX_INPUT, ONNX_OUTPUT } from "../onnx/attention-model.js";
import { buildBlockModel } from "../onnx/block-model.js";
import { buildDecodeMhaModel } from "../onnx/decode-mha-model.js";
import { buildDecodeModel, decodePast, ONNX_PAST_KEY, ONNX_PAST_VALUE } from "../onnx/decode-model.js";
import { buildExportedDecodeModel, EXPORTED_DECODE_OUTPUT, exportedDecodeFeeds } from "../onnx/decode-export-model.js";
import { isTrainKind, type BenchProblem, type ProblemKind } from "../problem.js";
import type { Impl, Runner, SetupOptions } from "./types.js";
import { adapterInfo, defaultAdapter, describeAdapter, holdEventLoop } from "./webgpu.js";

/** What both packages' InferenceSession and Tensor look like, as far as the harness uses them. */
export interface OrtLike {
  readonly Tensor: new (type: "float32", data: Float32Array, dims: readonly number[]) => unknown;
  readonly InferenceSession: {
    create(
      model: Uint8Array,
      options: Record<string, unknown>,
    ): Promise<{
      run(
        feeds: Record<string, unknown>,
        fetches?: readonly string[],
      ): Promise<Record<string, { readonly data: unknown }>>;
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
 * Concat: decode-model.ts), "mha" (the contrib MultiHeadAttention with past inputs: decode-mha-model.ts) or "export"
 * (attngraph's own decode graph through `exportOnnx`: decode-export-model.ts).
 */
export type DecodeModel = "concat" | "mha" | "export";

/** The ONNX model of the problem, built per shape (weights included). */
export function buildModel(p: ForwardProblem, decodeModel: DecodeModel = "concat"): Uint8Array {
  if (p.kind === "decode")
    return decodeModel === "mha"
      ? buildDecodeMhaModel(p)
      : decodeModel === "export"
        ? buildExportedDecodeModel(p)
        : buildDecodeModel(p);
  return p.kind === "block" ? buildBlockModel(p) : buildAttentionModel(p);
}

/** The model output a run reads: `y`, or the exported decode graph's `output` (its presents are not fetched). */
function modelOutput(p: ForwardProblem, decodeModel: DecodeModel): string {
  return p.kind === "decode" && decodeModel === "export" ? EXPORTED_DECODE_OUTPUT : ONNX_OUTPUT;
}

/** The model's inputs for the problem, as data and dims: x, and for decode the cached past keys and values. */
export function modelFeeds(
  p: ForwardProblem,
  decodeModel: DecodeModel = "concat",
): Record<string, { data: Float32Array; dims: number[] }> {
  const { b, t, d, h } = p.shape;
  if (p.kind !== "decode") return { [ONNX_INPUT]: { data: p.x, dims: [b, t, d] } };
  if (decodeModel === "export") return exportedDecodeFeeds(p);
  const past = decodePast(p); // once per shape, outside the timed region
  return {
    [ONNX_INPUT]: { data: p.token, dims: [b, 1, d] },
    [ONNX_PAST_KEY]: { data: past.key, dims: [b, h, t, d / h] },
    [ONNX_PAST_VALUE]: { data: past.value, dims: [b, h, t, d / h] },
  };
}

async function ortRunner(
  ort: OrtLike,
  problem: BenchProblem,
  sessionOptions: Record<string, unknown>,
  threads: number,
  decodeModel: DecodeModel,
): Promise<Runner> {
  if (isTrainKind(problem.kind)) throw new Error(ortUnsupported(problem.kind));
  const p = problem as ForwardProblem;
  const session = await ort.InferenceSession.create(buildModel(p, decodeModel), sessionOptions);
  const feeds = Object.fromEntries(
    Object.entries(modelFeeds(p, decodeModel)).map(([name, { data, dims }]) => [
      name,
      new ort.Tensor("float32", data, dims),
    ]),
  );
  const output = modelOutput(p, decodeModel);
  const fetches = [output];
  return {
    threads,
    async run() {
      const out = await session.run(feeds, fetches);
      const data = out[output]?.data;
      if (!(data instanceof Float32Array)) throw new Error(`output ${output} is not float32 data on the CPU`);
      return data;
    },
    dispose: () => session.release(),
  };
}

/** Why the other decode models' rows run nothing but decode. */
const DECODE_ONLY: Record<Exclude<DecodeModel, "concat">, string> = {
  mha: "decode only (the contrib MultiHeadAttention with past inputs)",
  export: "decode only (attngraph's decode graph exported with past and present caches)",
};

/**
 * onnxruntime-web or -node as a peer: `ort-web` / `ort-node`, or with the decode step as the contrib MultiHeadAttention
 * (`ort-web-mha` / `ort-node-mha`) or as attngraph's own exported decode graph (`ort-web-export` / `ort-node-export`):
 * those two decode only, run when named, for comparison with the plain model.
 */
export function ortImpl(runtime: "web" | "node", decodeModel: DecodeModel = "concat"): Impl {
  const only = decodeModel === "concat" ? undefined : DECODE_ONLY[decodeModel];
  return {
    name: `ort-${runtime}${only === undefined ? "" : `-${decodeModel}`}`,
    family: "peer",
    ...(only === undefined ? {} : { onlyWhenNamed: true }),
    unsupported: only === undefined ? ortUnsupported : (kind) => (kind === "decode" ? undefined : only),
    async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
      if (only !== undefined && p.kind !== "decode") throw new Error(only);
      const { ort, sessionOptions, threads } = await loadOrt(runtime, options.threads);
      return ortRunner(ort, p, sessionOptions, threads, decodeModel);
    },
  };
}

/**
 * onnxruntime-web (wasm EP) or -node (CPU EP) loaded, with the session options of every CPU row and the threads it
 * runs with (the flex problem's rows load it here too).
 */
export async function loadOrt(
  runtime: "web" | "node",
  threads: number,
): Promise<{ ort: OrtLike; sessionOptions: Record<string, unknown>; threads: number }> {
  if (runtime === "web") {
    const ort = await import("onnxruntime-web");
    // Read when the wasm module starts (the first session); later sessions in this process run with the same
    // count. Without it, onnxruntime-web picks min(4, cores / 2) threads.
    ort.env.wasm.numThreads = threads;
    ort.env.logLevel = "error";
    const sessionOptions = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
    return { ort: ort as unknown as OrtLike, sessionOptions, threads: ort.env.wasm.numThreads ?? threads };
  }
  const ort = await import("onnxruntime-node");
  const sessionOptions = {
    executionProviders: ["cpu"],
    graphOptimizationLevel: "all",
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    logSeverityLevel: 3,
  };
  return { ort: ort as unknown as OrtLike, sessionOptions, threads };
}

export const ortWebImpl: Impl = ortImpl("web");
export const ortNodeImpl: Impl = ortImpl("node");

/**
 * `ort-webgpu`: onnxruntime-web 1.30 on its WebGPU execution provider (`onnxruntime-web/webgpu`,
 * `executionProviders: ["webgpu"]`), the same model as `ort-web`. In Node its GPU is the `webgpu` package's (see
 * webgpu.ts); onnxruntime creates its own device from `navigator.gpu`, and the row names that device's adapter. Run
 * when named. Its wasm part runs on one thread (the kernels run on the GPU); outputs are read back to the host
 * (onnxruntime's default output location), in the timed region like every other row's.
 */
export const ortWebGpuImpl: Impl = {
  name: "ort-webgpu",
  family: "peer",
  onlyWhenNamed: true,
  unsupported: ortUnsupported,
  async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
    if (isTrainKind(p.kind)) throw new Error(ortUnsupported(p.kind));
    const { described } = await defaultAdapter(); // no adapter: an "unavailable" row that says what to install
    const release = holdEventLoop();
    try {
      const ort = await import("onnxruntime-web/webgpu");
      ort.env.wasm.numThreads = 1;
      ort.env.logLevel = "error";
      const runner = await ortRunner(
        ort as unknown as OrtLike,
        p,
        { executionProviders: ["webgpu"], graphOptimizationLevel: "all" },
        1,
        "concat",
      );
      const device = (await ort.env.webgpu.device) as GPUDevice | undefined;
      const info = adapterInfo(device);
      return {
        ...runner,
        ...(options.threads > 1 ? { note: "one host thread: WebGPU" } : {}),
        gpu: info ? describeAdapter(info) : described,
        async dispose() {
          try {
            await runner.dispose();
          } finally {
            release();
          }
        },
      };
    } catch (e) {
      release();
      throw e;
    }
  },
};
