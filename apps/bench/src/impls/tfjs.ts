// TensorFlow.js peers: @tensorflow/tfjs-backend-cpu (plain JS kernels), @tensorflow/tfjs-backend-wasm (XNNPACK) and,
// when named, @tensorflow/tfjs-backend-webgpu (WGSL kernels on `navigator.gpu`: in Node the `webgpu` package's, see
// webgpu.ts). All share tfjs-core's one global engine; each setup switches it to its backend, and each run checks it is
// still on.
//
// The forward uses the form that is fastest on tfjs-wasm (../shared/TOOLCHAIN.md §10): 2-D matMuls only, one per head
// for the scores and one for the weighted sum, with K transposed once for all heads (a batched 4-D matMul, or a 2-D
// matMul with transposeB, is about 10× slower there). tfjs-cpu runs the same code. The block (--problem block) reuses
// that attention core around LayerNorms, a fused qkv matMul and the GELU MLP (tfjsBlockForward). The training problems
// (--problem train-block, train-copy) run the same block body under tfjs's autodiff: see tfjs-train.ts.
import type * as TF from "@tensorflow/tfjs-core";
import {
  causalMask,
  isTrainKind,
  MLP_RATIO,
  transpose2d,
  type BenchProblem,
  type BlockProblem,
  type BlockWeights,
  type Problem,
  type ProblemKind,
} from "../problem.js";
import type { BenchShape } from "../shapes.js";
import type { Impl, Runner, SetupOptions } from "./types.js";
import { adapterInfo, defaultAdapter, describeAdapter, holdEventLoop, type GpuAdapter } from "./webgpu.js";

export type Backend = "cpu" | "wasm" | "webgpu";

export async function loadTf(backend: Backend, threads: number): Promise<{ tf: typeof TF; threads: () => number }> {
  // tfjs-backend-webgpu registers its backend only if navigator.gpu exists when it loads: install it first (no adapter
  // throws here, with what to install).
  if (backend === "webgpu") await defaultAdapter();
  const tf = await import("@tensorflow/tfjs-core");
  let count = () => 1;
  if (backend === "cpu") {
    await import("@tensorflow/tfjs-backend-cpu");
  } else if (backend === "webgpu") {
    await import("@tensorflow/tfjs-backend-webgpu");
  } else {
    const wasm = await import("@tensorflow/tfjs-backend-wasm");
    // Read when the backend initialises (once per process). Under Node its threaded build is not chosen (it would
    // start workers from a blob: URL, which Node rejects), so this stays 1 there; getThreadsCount says what it got.
    wasm.setThreadsCount(threads);
    count = () => wasm.getThreadsCount();
  }
  // Production mode: no per-op NaN checks, and no "install tfjs-node" banner in the middle of the table.
  tf.enableProdMode();
  return { tf, threads: count };
}

/** A plain 2-D matMul (tf.matMul, or the training form with a custom gradient: see tfjs-train.ts). */
export type MatMul = (a: TF.Tensor, b: TF.Tensor) => TF.Tensor2D;

/**
 * The causal attention core over all heads, 2-D ops only: per batch row and head, Q_h · Kᵀ_h · scale + mask →
 * softmax → · V_h, then the heads concatenated back to [b·T, d]. Q and V are read at column offsets `qCol`, `vCol` of
 * their [b·T, ·] tensors (so one fused qkv result serves both); kT is K transposed once for all heads, [d, b·T].
 */
export function causalHeads(
  tf: typeof TF,
  shape: BenchShape,
  q: TF.Tensor,
  qCol: number,
  kT: TF.Tensor,
  v: TF.Tensor,
  vCol: number,
  mask: TF.Tensor2D,
  scale: TF.Scalar,
  matMul: MatMul = tf.matMul,
): TF.Tensor2D {
  const { b, t, d, h } = shape;
  const D = d / h;
  const rows: TF.Tensor2D[] = [];
  for (let i = 0; i < b; i++) {
    const heads: TF.Tensor2D[] = [];
    for (let j = 0; j < h; j++) {
      const qh = tf.slice(q, [i * t, qCol + j * D], [t, D]); // [T, D]
      const khT = tf.slice(kT, [j * D, i * t], [D, t]); // [D, T]
      const vh = tf.slice(v, [i * t, vCol + j * D], [t, D]); // [T, D]
      const weights = tf.softmax(tf.add(tf.mul(matMul(qh, khT), scale), mask)); // [T, T]
      heads.push(matMul(weights, vh)); // [T, D]
    }
    rows.push(heads.length === 1 ? heads[0]! : tf.concat(heads, 1)); // [T, d]
  }
  return rows.length === 1 ? rows[0]! : tf.concat(rows, 0); // [b·T, d]
}

/** The causal multi-head attention forward in tfjs ops; weights are taken pre-transposed to [in, out]. */
export function tfjsForward(
  tf: typeof TF,
  p: Problem,
  w: {
    wqT: TF.Tensor2D;
    wkT: TF.Tensor2D;
    wvT: TF.Tensor2D;
    woT: TF.Tensor2D;
    bo: TF.Tensor1D;
    mask: TF.Tensor2D;
    scale: TF.Scalar;
  },
): TF.Tensor2D {
  const { b, t, d } = p.shape;
  return tf.tidy(() => {
    const x = tf.tensor2d(p.x, [b * t, d]);
    const q = tf.matMul(x, w.wqT); // [b·T, d]
    const kT = tf.transpose(tf.matMul(x, w.wkT)); // [d, b·T], transposed once for every head
    const v = tf.matMul(x, w.wvT); // [b·T, d]
    const context = causalHeads(tf, p.shape, q, 0, kT, v, 0, w.mask, w.scale);
    return tf.add(tf.matMul(context, w.woT), w.bo);
  });
}

/** The block's weights as tfjs tensors, matrices pre-transposed to [in, out]. */
export interface TfjsBlockWeights extends TfjsBlockParams, TfjsBlockConstants {}

/** The block's parameters (the tensors a training step updates). */
export interface TfjsBlockParams {
  readonly ln1w: TF.Tensor1D;
  readonly ln1b: TF.Tensor1D;
  readonly wqkvT: TF.Tensor2D;
  readonly woT: TF.Tensor2D;
  readonly ln2w: TF.Tensor1D;
  readonly ln2b: TF.Tensor1D;
  readonly w1T: TF.Tensor2D;
  readonly b1: TF.Tensor1D;
  readonly w2T: TF.Tensor2D;
  readonly b2: TF.Tensor1D;
}

/** The block's constants: the causal mask [T, T] (0 / −∞) and the scalars of attention, LayerNorm and GELU. */
export interface TfjsBlockConstants {
  readonly mask: TF.Tensor2D;
  readonly scale: TF.Scalar;
  readonly eps: TF.Scalar;
  readonly invSqrt2: TF.Scalar;
  readonly half: TF.Scalar;
  readonly one: TF.Scalar;
}

/** The block's parameters as tfjs tensors (matrices transposed to [in, out]) and its constants. */
export function tfjsBlockWeights(
  tf: typeof TF,
  p: BlockWeights & Pick<BlockProblem, "shape" | "scale" | "eps">,
): TfjsBlockWeights {
  const { t, d } = p.shape;
  const hidden = MLP_RATIO * d;
  return {
    ln1w: tf.tensor1d(p.ln1w),
    ln1b: tf.tensor1d(p.ln1b),
    wqkvT: tf.tensor2d(transpose2d(p.wqkv, 3 * d, d), [d, 3 * d]),
    woT: tf.tensor2d(transpose2d(p.wo, d, d), [d, d]),
    ln2w: tf.tensor1d(p.ln2w),
    ln2b: tf.tensor1d(p.ln2b),
    w1T: tf.tensor2d(transpose2d(p.w1, hidden, d), [d, hidden]),
    b1: tf.tensor1d(p.b1),
    w2T: tf.tensor2d(transpose2d(p.w2, d, hidden), [hidden, d]),
    b2: tf.tensor1d(p.b2),
    mask: tf.tensor2d(causalMask(t), [t, t]),
    scale: tf.scalar(p.scale),
    eps: tf.scalar(p.eps),
    invSqrt2: tf.scalar(Math.SQRT1_2),
    half: tf.scalar(0.5),
    one: tf.scalar(1),
  };
}

/**
 * The pre-norm transformer block in tfjs ops, in the form that is fastest on tfjs-wasm: 2-D matMuls only (one fused
 * qkv matMul, whose q and v columns the heads slice directly; K transposed once), the bias-carrying MLP matMuls as
 * `tf.fused.matMul` with the bias, LayerNorm from `tf.moments` (biased variance, as nn.LayerNorm), and GELU in its erf
 * form with tfjs's own `tf.erf`: both backends have an Erf kernel (tfjs-cpu's is Abramowitz–Stegun 7.1.26, |error| ≤
 * 1.5e-7; tfjs-wasm's is in its compiled C++), so no substitute formula is needed.
 */
export function tfjsBlockForward(tf: typeof TF, p: BlockProblem, w: TfjsBlockWeights): TF.Tensor2D {
  const { b, t, d } = p.shape;
  return tf.tidy(() => tfjsBlockBody(tf, p.shape, tf.tensor2d(p.x, [b * t, d]), w, forwardMatOps(tf)));
}

/** How the block's matMuls are done: plain (attention core, qkv, out_proj) and with a bias (the MLP). */
export interface MatOps {
  readonly matMul: MatMul;
  readonly linear: (a: TF.Tensor, w: TF.Tensor2D, bias: TF.Tensor1D) => TF.Tensor2D;
  /**
   * The attention core as 3-D batched matMuls over all b·h heads at once (batchedHeads) instead of one 2-D matMul per
   * batch row and head: the faster form when there are many tiny heads (the copy task: 128 heads of 8×8).
   */
  readonly batchedHeads?: boolean;
}

/**
 * The causal attention core as batched matMuls: q, k, v [b·T, d] (columns qCol, d, vCol of qkv) → [b·h, T, D] each,
 * softmax(q·kᵀ · scale + mask) · v, heads merged back to [b·T, d].
 */
export function causalHeadsBatched(
  tf: typeof TF,
  shape: BenchShape,
  qkv: TF.Tensor2D,
  mask: TF.Tensor2D,
  scale: TF.Scalar,
): TF.Tensor2D {
  const { b, t, d, h } = shape;
  const D = d / h;
  const heads = (col: number) =>
    tf.reshape(tf.transpose(tf.reshape(tf.slice(qkv, [0, col], [b * t, d]), [b, t, h, D]), [0, 2, 1, 3]), [
      b * h,
      t,
      D,
    ]);
  const weights = tf.softmax(tf.add(tf.mul(tf.matMul(heads(0), heads(d), false, true), scale), mask)); // [b·h, T, T]
  const context = tf.matMul(weights, heads(2 * d)); // [b·h, T, D]
  return tf.reshape(tf.transpose(tf.reshape(context, [b, h, t, D]), [0, 2, 1, 3]), [b * t, d]);
}

/** The forward's: tf.matMul, and tf.fused.matMul with the bias. */
export function forwardMatOps(tf: typeof TF): MatOps {
  return { matMul: tf.matMul, linear: (a, w, bias) => tf.fused.matMul({ a, b: w, bias }) as TF.Tensor2D };
}

/** The block on x [b·T, d] (see tfjsBlockForward), with the given matMuls; no tidy (a training step records it). */
export function tfjsBlockBody(
  tf: typeof TF,
  shape: BenchShape,
  x: TF.Tensor2D,
  w: TfjsBlockWeights,
  ops: MatOps,
): TF.Tensor2D {
  const { b, t, d } = shape;
  const layerNorm = (x: TF.Tensor, weight: TF.Tensor1D, bias: TF.Tensor1D): TF.Tensor2D => {
    const { mean, variance } = tf.moments(x, -1, true); // [rows, 1] each
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, w.eps))), weight), bias);
  };
  const ln1 = layerNorm(x, w.ln1w, w.ln1b);
  const qkv = ops.matMul(ln1, w.wqkvT); // [b·T, 3d]: q | k | v
  const context = ops.batchedHeads
    ? causalHeadsBatched(tf, shape, qkv, w.mask, w.scale)
    : causalHeads(
        tf,
        shape,
        qkv,
        0,
        tf.transpose(tf.slice(qkv, [0, d], [b * t, d])),
        qkv,
        2 * d,
        w.mask,
        w.scale,
        ops.matMul,
      ); // K transposed once: [d, b·T]
  const residual = tf.add(x, ops.matMul(context, w.woT));
  const ln2 = layerNorm(residual, w.ln2w, w.ln2b);
  const hid = ops.linear(ln2, w.w1T, w.b1); // [b·T, 4d]
  const gelu = tf.mul(tf.mul(hid, w.half), tf.add(tf.erf(tf.mul(hid, w.invSqrt2)), w.one));
  const mlp = ops.linear(gelu, w.w2T, w.b2);
  return tf.add(residual, mlp);
}

/** The attention's weights as tfjs tensors, matrices pre-transposed to [in, out]. */
function tfjsAttentionWeights(tf: typeof TF, p: Problem) {
  const { t, d } = p.shape;
  return {
    wqT: tf.tensor2d(transpose2d(p.wq, d, d), [d, d]),
    wkT: tf.tensor2d(transpose2d(p.wk, d, d), [d, d]),
    wvT: tf.tensor2d(transpose2d(p.wv, d, d), [d, d]),
    woT: tf.tensor2d(transpose2d(p.wo, d, d), [d, d]),
    bo: tf.tensor1d(p.bo),
    mask: tf.tensor2d(causalMask(t), [t, t]),
    scale: tf.scalar(p.scale),
  };
}

/**
 * How a training step gets its matMuls' gradients (see tfjs-train.ts): "transposed" (default) a customGrad whose
 * backward is two plain 2-D matMuls of explicitly transposed operands; "stock" tfjs's own matMul gradient, which uses
 * matMul's transposeA / transposeB forms.
 */
export type MatMulGrad = "transposed" | "stock";

/**
 * Why tfjs has no decode rows: the issue compares decoding with onnxruntime running a model with past key/values; tfjs
 * has no such model here (a decode step in tfjs ops would be a hand-written loop of our own, not how tfjs users decode).
 */
export const TFJS_NO_DECODE =
  "no decode: the decode rows compare onnxruntime's past key/value models (no tfjs decode model here)";

/** Why tfjs-webgpu has no training rows: the WebGPU peers are forward rows (attention, block); its training is not checked here. */
export const TFJS_WEBGPU_FORWARD_ONLY =
  "forward problems only (attention, block): tfjs-webgpu's training step is not checked here";

/** Why a tfjs row does not run a problem, or undefined. */
function tfjsUnsupported(backend: Backend, stock: boolean): (kind: ProblemKind) => string | undefined {
  // The stock variant differs only in how gradients are taken (a forward problem has none).
  if (stock) return (kind) => (isTrainKind(kind) ? undefined : "training problems only (stock matMul gradients)");
  return (kind) =>
    kind === "decode"
      ? TFJS_NO_DECODE
      : backend === "webgpu" && isTrainKind(kind)
        ? TFJS_WEBGPU_FORWARD_ONLY
        : undefined;
}

/**
 * tfjs on `backend`; `tfjs-<backend>`, or `tfjs-<backend>-stock` with stock matMul gradients (training problems only).
 * `tfjs-webgpu` runs when named, on the device tfjs-backend-webgpu asks `navigator.gpu` for, and names its adapter.
 */
export function tfjsImpl(backend: Backend, matMulGrad: MatMulGrad = "transposed"): Impl {
  const stock = matMulGrad === "stock";
  const unsupported = tfjsUnsupported(backend, stock);
  return {
    name: `tfjs-${backend}${stock ? "-stock" : ""}`,
    family: "peer",
    // Run when named: the stock variant, a comparison (about 7× slower than the default form on tfjs-wasm at
    // 1,512,768,12); the WebGPU one, which needs an adapter (and on SwiftShader checks correctness only).
    ...(stock || backend === "webgpu" ? { onlyWhenNamed: true } : {}),
    unsupported,
    async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
      const why = unsupported(p.kind);
      if (why !== undefined) throw new Error(why);
      const { tf, threads: threadCount } = await loadTf(backend, options.threads);
      // dawn.node's promises need the event loop held open (webgpu.ts); released by dispose, or here on a failed setup.
      const release = backend === "webgpu" ? holdEventLoop() : () => undefined;
      try {
        return await tfjsRunner(
          tf,
          backend,
          p as Exclude<BenchProblem, { kind: "decode" }>,
          options,
          threadCount,
          matMulGrad,
          release,
        ); // decode: unsupported, above
      } catch (e) {
        release();
        throw e;
      }
    },
  };
}

/** The runner of a tfjs impl whose backend loaded (`release` ends what setup holds, on dispose). */
async function tfjsRunner(
  tf: typeof TF,
  backend: Backend,
  p: Exclude<BenchProblem, { kind: "decode" }>,
  options: SetupOptions,
  threadCount: () => number,
  matMulGrad: MatMulGrad,
  release: () => void,
): Promise<Runner> {
  if (!(await tf.setBackend(backend))) throw new Error(`tf.setBackend("${backend}") failed`);
  const threads = threadCount();
  const note =
    threads < options.threads
      ? backend === "wasm"
        ? "no wasm threads in Node"
        : backend === "webgpu"
          ? "one host thread: WebGPU"
          : "single-threaded"
      : undefined;
  // The adapter of the device tfjs-backend-webgpu made (it asks navigator.gpu for one itself); else navigator.gpu's own.
  let gpu: GpuAdapter | undefined;
  if (backend === "webgpu") {
    const info = adapterInfo((tf.backend() as { device?: GPUDevice }).device);
    gpu = info ? describeAdapter(info) : (await defaultAdapter()).described;
  }
  if (p.kind === "train-block" || p.kind === "train-copy") {
    await (await import("./tfjs-gradients.js")).registerTfjsGradients();
    const { tfjsTrainRunner } = await import("./tfjs-train.js");
    return tfjsTrainRunner(tf, backend, p, { threads, matMulGrad, ...(note ? { note } : {}) });
  }
  let weights: Record<string, TF.Tensor>;
  let forward: () => TF.Tensor2D;
  if (p.kind === "block") {
    const w = tfjsBlockWeights(tf, p);
    [weights, forward] = [{ ...w }, () => tfjsBlockForward(tf, p, w)];
  } else {
    const w = tfjsAttentionWeights(tf, p);
    [weights, forward] = [w, () => tfjsForward(tf, p, w)];
  }
  return {
    threads,
    ...(note ? { note } : {}),
    ...(gpu ? { gpu } : {}),
    async run() {
      if (tf.getBackend() !== backend) await tf.setBackend(backend);
      const y = forward();
      const data = (await y.data()) as Float32Array;
      y.dispose();
      return data;
    },
    async dispose() {
      try {
        for (const v of Object.values(weights)) v.dispose();
      } finally {
        release();
      }
    },
  };
}
