// TensorFlow.js peers: @tensorflow/tfjs-backend-cpu (plain JS kernels) and @tensorflow/tfjs-backend-wasm (XNNPACK).
// Both share tfjs-core's one global engine; each setup switches it to its backend, and each run checks it is still on.
//
// The forward uses the form that is fastest on tfjs-wasm (../shared/TOOLCHAIN.md §10): 2-D matMuls only, one per head
// for the scores and one for the weighted sum, with K transposed once for all heads (a batched 4-D matMul, or a 2-D
// matMul with transposeB, is about 10× slower there). tfjs-cpu runs the same code.
import type * as TF from "@tensorflow/tfjs-core";
import { causalMask, transpose2d, type Problem } from "../problem.js";
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

/** The causal multi-head attention forward in tfjs ops; weights are taken pre-transposed to [in, out]. */
export function tfjsForward(tf: typeof TF, p: Problem, w: { wqT: TF.Tensor2D; wkT: TF.Tensor2D; wvT: TF.Tensor2D; woT: TF.Tensor2D; bo: TF.Tensor1D; mask: TF.Tensor2D; scale: TF.Scalar }): TF.Tensor2D {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  return tf.tidy(() => {
    const x = tf.tensor2d(p.x, [b * t, d]);
    const q = tf.matMul(x, w.wqT); // [b·T, d]
    const kT = tf.transpose(tf.matMul(x, w.wkT)); // [d, b·T], transposed once for every head
    const v = tf.matMul(x, w.wvT); // [b·T, d]
    const rows: TF.Tensor2D[] = [];
    for (let i = 0; i < b; i++) {
      const heads: TF.Tensor2D[] = [];
      for (let j = 0; j < h; j++) {
        const qh = tf.slice(q, [i * t, j * D], [t, D]); // [T, D]
        const khT = tf.slice(kT, [j * D, i * t], [D, t]); // [D, T]
        const vh = tf.slice(v, [i * t, j * D], [t, D]); // [T, D]
        const weights = tf.softmax(tf.add(tf.mul(tf.matMul(qh, khT), w.scale), w.mask)); // [T, T]
        heads.push(tf.matMul(weights, vh)); // [T, D]
      }
      rows.push(heads.length === 1 ? heads[0]! : tf.concat(heads, 1)); // [T, d]
    }
    const context = rows.length === 1 ? rows[0]! : tf.concat(rows, 0); // [b·T, d]
    return tf.add(tf.matMul(context, w.woT), w.bo);
  });
}

export function tfjsImpl(backend: Backend): Impl {
  return {
    name: `tfjs-${backend}`,
    family: "peer",
    async setup(p: Problem, options: SetupOptions): Promise<Runner> {
      const { tf, threads: threadCount } = await loadTf(backend, options.threads);
      if (!(await tf.setBackend(backend))) throw new Error(`tf.setBackend("${backend}") failed`);
      const threads = threadCount();
      const note = threads < options.threads ? (backend === "wasm" ? "no wasm threads in Node" : "single-threaded") : undefined;
      const { t, d } = p.shape;
      const w = {
        wqT: tf.tensor2d(transpose2d(p.wq, d, d), [d, d]),
        wkT: tf.tensor2d(transpose2d(p.wk, d, d), [d, d]),
        wvT: tf.tensor2d(transpose2d(p.wv, d, d), [d, d]),
        woT: tf.tensor2d(transpose2d(p.wo, d, d), [d, d]),
        bo: tf.tensor1d(p.bo),
        mask: tf.tensor2d(causalMask(t), [t, t]),
        scale: tf.scalar(p.scale),
      };
      return {
        threads,
        ...(note ? { note } : {}),
        async run() {
          if (tf.getBackend() !== backend) await tf.setBackend(backend);
          const y = tfjsForward(tf, p, w);
          const data = (await y.data()) as Float32Array;
          y.dispose();
          return data;
        },
        async dispose() {
          for (const v of Object.values(w)) v.dispose();
        },
      };
    },
  };
}
