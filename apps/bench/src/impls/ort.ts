// onnxruntime peers: onnxruntime-web on its wasm execution provider, and onnxruntime-node (native, CPU EP), both
// running the ONNX model of the same attention (../onnx/attention-model.ts) or block (../onnx/block-model.ts).
// onnxruntime-web bundles its own copy of onnxruntime-common, so the two keep separate `env`s in one process.
import { buildAttentionModel, ONNX_INPUT, ONNX_OUTPUT } from "../onnx/attention-model.js";
import { buildBlockModel } from "../onnx/block-model.js";
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

/** The forward problems (onnxruntime-web and -node are inference runtimes: no training problems). */
type ForwardProblem = Extract<BenchProblem, { kind: "attention" | "block" }>;

/** Why an onnxruntime peer does not run a problem (the training ones), or undefined. */
export function ortUnsupported(kind: ProblemKind): string | undefined {
  return isTrainKind(kind) ? "no training: onnxruntime-web/-node run inference only" : undefined;
}

/** The ONNX model of the problem, built per shape (weights included). */
export function buildModel(p: ForwardProblem): Uint8Array {
  return p.kind === "block" ? buildBlockModel(p) : buildAttentionModel(p);
}

async function ortRunner(ort: OrtLike, problem: BenchProblem, sessionOptions: Record<string, unknown>, threads: number): Promise<Runner> {
  if (isTrainKind(problem.kind)) throw new Error(ortUnsupported(problem.kind));
  const p = problem as ForwardProblem;
  const session = await ort.InferenceSession.create(buildModel(p), sessionOptions);
  const { b, t, d } = p.shape;
  const x = new ort.Tensor("float32", p.x, [b, t, d]);
  return {
    threads,
    async run() {
      const out = await session.run({ [ONNX_INPUT]: x });
      const data = out[ONNX_OUTPUT]?.data;
      if (!(data instanceof Float32Array)) throw new Error(`output ${ONNX_OUTPUT} is not float32 data on the CPU`);
      return data;
    },
    dispose: () => session.release(),
  };
}

export const ortWebImpl: Impl = {
  name: "ort-web",
  family: "peer",
  unsupported: ortUnsupported,
  async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
    const ort = await import("onnxruntime-web");
    // Read when the wasm module starts (the first session); later sessions in this process run with the same count.
    // Without it, onnxruntime-web picks min(4, cores / 2) threads.
    ort.env.wasm.numThreads = options.threads;
    ort.env.logLevel = "error";
    const opts = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
    return ortRunner(ort as unknown as OrtLike, p, opts, ort.env.wasm.numThreads ?? options.threads);
  },
};

export const ortNodeImpl: Impl = {
  name: "ort-node",
  family: "peer",
  unsupported: ortUnsupported,
  async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
    const ort = await import("onnxruntime-node");
    const opts = {
      executionProviders: ["cpu"],
      graphOptimizationLevel: "all",
      intraOpNumThreads: options.threads,
      interOpNumThreads: 1,
      executionMode: "sequential",
      logSeverityLevel: 3,
    };
    return ortRunner(ort as unknown as OrtLike, p, opts, options.threads);
  },
};
