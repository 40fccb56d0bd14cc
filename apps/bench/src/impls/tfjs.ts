// TensorFlow.js peers: @tensorflow/tfjs-backend-cpu (plain JS kernels) and @tensorflow/tfjs-backend-wasm (XNNPACK).
// Both share tfjs-core's one global engine; each setup switches it to its backend, and each run checks it is still on.
//
// The forward uses the form that is fastest on tfjs-wasm (../shared/TOOLCHAIN.md §10): 2-D matMuls only, one per head
// for the scores and one for the weighted sum, with K transposed once for all heads (a batched 4-D matMul, or a 2-D
// matMul with transposeB, is about 10× slower there). tfjs-cpu runs the same code. The block (--problem block) reuses
// that attention core around LayerNorms, a fused qkv matMul and the GELU MLP (tfjsBlockForward).
import type * as TF from "@tensorflow/tfjs-core";
import { causalMask, MLP_RATIO, transpose2d, type BenchProblem, type BlockProblem, type Problem } from "../problem.js";
import type { BenchShape } from "../shapes.js";
import type { Impl, Runner, SetupOptions } from "./types.js";

type Backend = "cpu" | "wasm";

async function loadTf(backend: Backend, threads: number): Promise<{ tf: typeof TF; threads: () => number }> {
  const tf = await import("@tensorflow/tfjs-core");
  let count = () => 1;
  if (backend === "cpu") {
    await import("@tensorflow/tfjs-backend-cpu");
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

/**
 * The causal attention core over all heads, 2-D ops only: per batch row and head, Q_h · Kᵀ_h · scale + mask →
 * softmax → · V_h, then the heads concatenated back to [b·T, d]. Q and V are read at column offsets `qCol`, `vCol` of
 * their [b·T, ·] tensors (so one fused qkv result serves both); kT is K transposed once for all heads, [d, b·T].
 */
function causalHeads(tf: typeof TF, shape: BenchShape, q: TF.Tensor, qCol: number, kT: TF.Tensor, v: TF.Tensor, vCol: number, mask: TF.Tensor2D, scale: TF.Scalar): TF.Tensor2D {
  const { b, t, d, h } = shape;
  const D = d / h;
  const rows: TF.Tensor2D[] = [];
  for (let i = 0; i < b; i++) {
    const heads: TF.Tensor2D[] = [];
    for (let j = 0; j < h; j++) {
      const qh = tf.slice(q, [i * t, qCol + j * D], [t, D]); // [T, D]
      const khT = tf.slice(kT, [j * D, i * t], [D, t]); // [D, T]
      const vh = tf.slice(v, [i * t, vCol + j * D], [t, D]); // [T, D]
      const weights = tf.softmax(tf.add(tf.mul(tf.matMul(qh, khT), scale), mask)); // [T, T]
      heads.push(tf.matMul(weights, vh)); // [T, D]
    }
    rows.push(heads.length === 1 ? heads[0]! : tf.concat(heads, 1)); // [T, d]
  }
  return rows.length === 1 ? rows[0]! : tf.concat(rows, 0); // [b·T, d]
}

/** The causal multi-head attention forward in tfjs ops; weights are taken pre-transposed to [in, out]. */
export function tfjsForward(tf: typeof TF, p: Problem, w: { wqT: TF.Tensor2D; wkT: TF.Tensor2D; wvT: TF.Tensor2D; woT: TF.Tensor2D; bo: TF.Tensor1D; mask: TF.Tensor2D; scale: TF.Scalar }): TF.Tensor2D {
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
export interface TfjsBlockWeights {
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
  readonly mask: TF.Tensor2D;
  readonly scale: TF.Scalar;
  readonly eps: TF.Scalar;
  readonly invSqrt2: TF.Scalar;
  readonly half: TF.Scalar;
  readonly one: TF.Scalar;
}

function tfjsBlockWeights(tf: typeof TF, p: BlockProblem): TfjsBlockWeights {
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
  const layerNorm = (x: TF.Tensor, weight: TF.Tensor1D, bias: TF.Tensor1D): TF.Tensor2D => {
    const { mean, variance } = tf.moments(x, -1, true); // [rows, 1] each
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, w.eps))), weight), bias);
  };
  return tf.tidy(() => {
    const x = tf.tensor2d(p.x, [b * t, d]);
    const ln1 = layerNorm(x, w.ln1w, w.ln1b);
    const qkv = tf.matMul(ln1, w.wqkvT); // [b·T, 3d]: q | k | v
    const kT = tf.transpose(tf.slice(qkv, [0, d], [b * t, d])); // [d, b·T]
    const context = causalHeads(tf, p.shape, qkv, 0, kT, qkv, 2 * d, w.mask, w.scale);
    const residual = tf.add(x, tf.matMul(context, w.woT));
    const ln2 = layerNorm(residual, w.ln2w, w.ln2b);
    const hid = tf.fused.matMul({ a: ln2, b: w.w1T, bias: w.b1 }); // [b·T, 4d]
    const gelu = tf.mul(tf.mul(hid, w.half), tf.add(tf.erf(tf.mul(hid, w.invSqrt2)), w.one));
    const mlp = tf.fused.matMul({ a: gelu, b: w.w2T, bias: w.b2 });
    return tf.add(residual, mlp);
  });
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

export function tfjsImpl(backend: Backend): Impl {
  return {
    name: `tfjs-${backend}`,
    family: "peer",
    async setup(p: BenchProblem, options: SetupOptions): Promise<Runner> {
      const { tf, threads: threadCount } = await loadTf(backend, options.threads);
      if (!(await tf.setBackend(backend))) throw new Error(`tf.setBackend("${backend}") failed`);
      const threads = threadCount();
      const note = threads < options.threads ? (backend === "wasm" ? "no wasm threads in Node" : "single-threaded") : undefined;
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
        async run() {
          if (tf.getBackend() !== backend) await tf.setBackend(backend);
          const y = forward();
          const data = (await y.data()) as Float32Array;
          y.dispose();
          return data;
        },
        async dispose() {
          for (const v of Object.values(weights)) v.dispose();
        },
      };
    },
  };
}
