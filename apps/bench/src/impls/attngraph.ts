// attngraph executors, run the way a user runs attention: multiHeadAttention → compile → session.run; for the block,
// transformerBlock → compile (weights by state_dict name) → session.run; for decode, see attngraph-decode.ts.
import { attentionWeights, multiHeadAttention, type AttentionConfigInput } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import type { Executor, OpGraph } from "@attngraph/graph";
import { loadStateDict, simpleTransformer, transformerBlock, type BlockConfigInput } from "@attngraph/nn";
import { compile, type Session } from "@attngraph/runtime";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { adam, createTrainer } from "@attngraph/train";
import {
  ADAM_BETAS,
  ADAM_EPS,
  blockStateDict,
  copyStateDict,
  MLP_RATIO,
  type BenchProblem,
  type BlockProblem,
  type Problem,
  type TrainBlockProblem,
  type TrainCopyProblem,
} from "../problem.js";
import { decodeRunner } from "./attngraph-decode.js";
import type { Impl, Runner, SetupOptions } from "./types.js";
import { adapterInfo, describeAdapter, type GpuAdapter } from "./webgpu.js";

/**
 * The attngraph executors the harness benchmarks, by the name on the command line. To add one, add a line, e.g.
 * `wasm: async () => (await import("@attngraph/executor-wasm")).createWasmExecutor()`, plus the dependency and a
 * tsconfig reference in apps/bench. `threads` is passed through for executors that can use it.
 */
export const attngraphExecutors: Readonly<Record<string, (options: SetupOptions) => Executor | Promise<Executor>>> = {
  cpu: () => createCpuExecutor(),
  // --threads reaches the wasm executor's worker pool (at most its 16); init() starts the workers.
  wasm: async ({ threads }) => {
    const executor = (await import("@attngraph/executor-wasm")).createWasmExecutor({
      threads: Math.max(1, Math.min(threads, 16)),
    });
    await executor.init();
    return executor;
  },
  // Real GPUs (not in CI): the device comes from navigator.gpu or, in Node, the webgpu package (Dawn).
  webgpu: async () => (await import("@attngraph/executor-webgpu")).createWebGpuExecutor(),
};

/**
 * Threads an executor actually uses, and why fewer than asked when it says (the CPU executor is single-threaded
 * TypeScript; webgpu has one host thread feeding the GPU; wasm runs what its pool started: `executor.threading`).
 */
export function executorThreads(
  executor: Executor,
  asked: number,
): { readonly threads: number; readonly note?: string } {
  const threading = (executor as { threading?: { threads: number; reason?: string } }).threading;
  const threads = threading?.threads ?? 1;
  if (asked <= threads) return { threads };
  return {
    threads,
    note:
      threading?.reason !== undefined
        ? `${threads} thread${threads > 1 ? "s" : ""}: ${threading.reason}`
        : "single-threaded",
  };
}

/**
 * The adapter of a WebGPU executor's device, once it has one (`executor.device`, after compile; else its
 * `adapterDescription`); undefined for an executor without a GPU.
 */
function executorGpu(executor: Executor): GpuAdapter | undefined {
  const e = executor as { device?: GPUDevice; adapterDescription?: string };
  const info = adapterInfo(e.device);
  if (info) return describeAdapter(info);
  return e.adapterDescription !== undefined ? describeAdapter({ description: e.adapterDescription }) : undefined;
}

/** The attention config of the benchmark: causal, d_in = d_out = d, out_proj with bias, no Q/K/V bias. */
export function benchConfig(p: Pick<Problem, "shape">): AttentionConfigInput {
  const { d, h } = p.shape;
  return { dIn: d, dOut: d, numHeads: h, causal: true, qkvBias: false, outProj: true, outBias: true };
}

/**
 * The block config of the benchmark: the worked example's pre-norm block, causal by attribute (no mask input, so the
 * attention can fuse), GELU erf form, LayerNorm eps 1e-5, MLP 4·d, no Q/K/V or out_proj bias.
 */
export function benchBlockConfig(p: Pick<BlockProblem, "shape" | "eps">): BlockConfigInput {
  const { d, h } = p.shape;
  return { embedDim: d, nHeads: h, causal: true, mlpRatio: MLP_RATIO, layerNormEps: p.eps, gelu: "erf" };
}

/** The graph and its weights (by name) for either forward problem. */
export function benchGraph(p: Problem | BlockProblem): { graph: OpGraph; weights: Record<string, AnyTensor> } {
  if (p.kind === "block") {
    const graph = transformerBlock(benchBlockConfig(p));
    // loadStateDict checks every key and shape against graph.weights (a StateDictError lists what does not fit).
    return { graph, weights: loadStateDict(graph, blockStateDict(p)) };
  }
  return { graph: multiHeadAttention(benchConfig(p)), weights: benchAttentionWeights(p) };
}

/** The attention's weights by the graph's names (the attention and decode problems share them). */
export function benchAttentionWeights(
  p: Pick<Problem, "shape" | "wq" | "wk" | "wv" | "wo" | "bo">,
): Record<string, AnyTensor> {
  const { d } = p.shape;
  const m = (data: Float32Array) => ({ shape: [d, d], data });
  return attentionWeights(benchConfig(p), {
    W_query: m(p.wq),
    W_key: m(p.wk),
    W_value: m(p.wv),
    out_proj: m(p.wo),
    out_bias: { shape: [d], data: p.bo },
  });
}

/**
 * The two ways of observing a session's runs (Runner.streams); what the subscribers receive is counted with `count`,
 * so that the stream cannot be optimised away.
 */
export function sessionStreams(
  session: Pick<Session, "events$" | "tap">,
  count: (n: number) => void,
): NonNullable<Runner["streams"]> {
  return {
    events$: () => {
      const s = session.events$.subscribe(() => count(1));
      return () => s.unsubscribe();
    },
    "tap-all": () => {
      const s = session.tap(() => true).subscribe((e) => count(e.tensor.size > 0 ? 1 : 0));
      return () => s.unsubscribe();
    },
  };
}

/**
 * Peak planned bytes of the untapped run: the session's buffer plan (arena) for the run's input shapes; undefined
 * ("n/a") for an executor without arenas (it allocates per step, e.g. webgpu from its buffer pool).
 */
export function plannedPeakBytes(
  session: { memoryPlan(inputShapes: Readonly<Record<string, readonly number[]>>): ReturnType<Session["memoryPlan"]> },
  inputShapes: Readonly<Record<string, readonly number[]>>,
): number | undefined {
  const plan = session.memoryPlan(inputShapes);
  return plan.arenaElements.size === 0 ? undefined : plan.peakBytes;
}

/** An attngraph runner also counts what its stream subscribers received (events, tapped tensors). */
export interface AttngraphRunner extends Runner {
  readonly observed: () => number;
}

export interface AttngraphImpl extends Impl {
  setup(p: BenchProblem, options: SetupOptions): Promise<AttngraphRunner>;
}

/**
 * What a training problem trains, as the trainer takes it: the model graph with its initial weights (by state_dict
 * name), the node to minimise and one batch (the same every step).
 *  - train-block: transformerBlock as for the block problem; the loss node is `output` itself, not a scalar, so the
 *    batch carries its upstream gradient as input `output.grad` (the trainer's step then resolves to
 *    sum(output ⊙ output.grad), computed on the host from the output it reads back).
 *  - train-copy: simpleTransformer(config, { loss: true }), the worked example's model with its mean cross-entropy
 *    `loss`; tokens and targets (= tokens) int32 [b, T].
 */
export function benchTrainModel(p: TrainBlockProblem | TrainCopyProblem): {
  graph: OpGraph;
  weights: Record<string, AnyTensor>;
  loss: string;
  batch: Record<string, AnyTensor>;
} {
  const { b, t, d, h } = p.shape;
  if (p.kind === "train-block") {
    const graph = transformerBlock(benchBlockConfig(p));
    const batch = { x: new Tensor(p.x, [b, t, d]), "output.grad": new Tensor(p.gradOutput, [b, t, d]) };
    return { graph, weights: loadStateDict(graph, blockStateDict(p)), loss: "output", batch };
  }
  const graph = simpleTransformer(
    { vocabSize: p.vocab, embedDim: d, nHeads: h, seqLen: t, mlpRatio: MLP_RATIO, layerNormEps: p.eps, gelu: "erf" },
    { loss: true },
  );
  const tokens = Tensor.int32(p.tokens, [b, t]);
  return { graph, weights: loadStateDict(graph, copyStateDict(p)), loss: "loss", batch: { tokens, targets: tokens } };
}

/**
 * A training runner: createTrainer(graph, { loss, optimizer: adam({ lr }), executors: [one], weights }); each run is
 * one `trainer.step(batch)` (forward, backward, Adam's update, the loss read back). The planned peak is the training
 * step's arena (session.memoryPlan of the step's input shapes: the batch and Adam's step count): every intermediate of
 * the forward and the backward, the activations kept for the backward included; not the parameters, Adam's moments,
 * or the new parameters and moments the step keeps for the next one (they outlive the run, so no arena holds them).
 */
async function trainRunner(
  executor: Executor,
  p: TrainBlockProblem | TrainCopyProblem,
  threads: number,
): Promise<AttngraphRunner> {
  const { graph, weights, loss, batch } = benchTrainModel(p);
  const optimizer = adam({ lr: p.lr, betas: [...ADAM_BETAS], eps: ADAM_EPS });
  const trainer = await createTrainer(graph, { loss, optimizer, executors: [executor], weights });
  const losses: number[] = []; // of the first two steps, for the check
  const step = async () => {
    const l = await trainer.step(batch);
    if (losses.length < 2) losses.push(l);
    return l;
  };
  const inputShapes = {
    ...Object.fromEntries(Object.entries(batch).map(([k, v]) => [k, v.shape])),
    [optimizer.stepInput]: [1],
  };
  return {
    threads,
    run: async () => Float32Array.of(await step()),
    async checked() {
      while (losses.length < 2) await step();
      return Float32Array.from(losses);
    },
    plannedPeakBytes: plannedPeakBytes(trainer.session, inputShapes),
    observed: () => 0,
    dispose: () => trainer.dispose(),
  };
}

export function attngraphImpl(name: string): AttngraphImpl {
  const make = attngraphExecutors[name];
  if (!make) throw new Error(`no attngraph executor "${name}"`);
  return {
    name,
    family: "attngraph",
    async setup(p: BenchProblem, options: SetupOptions): Promise<AttngraphRunner> {
      const executor = await make(options);
      const { threads, note } = executorThreads(executor, options.threads);
      if (p.kind === "train-block" || p.kind === "train-copy" || p.kind === "decode") {
        const runner =
          p.kind === "decode" ? await decodeRunner(executor, p, threads) : await trainRunner(executor, p, threads);
        const gpu = executorGpu(executor);
        return { ...runner, ...(note !== undefined ? { note } : {}), ...(gpu ? { gpu } : {}) };
      }
      const { b, t, d } = p.shape;
      const { graph, weights } = benchGraph(p);
      const session = await compile(graph, { executors: [executor], weights });
      const x = new Tensor(p.x, [b, t, d]);
      const outName = graph.outputs[0]!;
      let seen = 0; // what the subscribers do: count, so the stream cannot be optimised away
      const gpu = executorGpu(executor);
      return {
        threads,
        ...(note !== undefined ? { note } : {}),
        ...(gpu ? { gpu } : {}),
        async run() {
          const out = (await session.run({ x }))[outName]!.contiguous();
          return out.data.subarray(out.offset, out.offset + out.size);
        },
        streams: sessionStreams(session, (n) => void (seen += n)),
        plannedPeakBytes: plannedPeakBytes(session, { x: x.shape }),
        observed: () => seen,
        dispose: () => session.dispose(),
      };
    },
  };
}
