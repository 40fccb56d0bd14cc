// TensorFlow.js training peers (--problem train-block, train-copy): the same model in tfjs ops, one step = tfjs's own
// autodiff (tf.valueAndGrads for the block, optimizer.minimize for the copy-task model) and its Adam
// (tf.train.adam(lr, 0.9, 0.999, 1e-8): torch.optim.Adam's update, eps added after the square root).
//
// The forward is the one tfjs.ts times (2-D matMuls only, per-head slices, K transposed once, LayerNorm from
// tf.moments, GELU with tf.erf, whose gradient tfjs has on both backends). What differs, and why:
//  - matMul gradients (default "transposed"): each matMul is a tf.customGrad whose backward is dA = dY · transpose(B)
//    and dB = transpose(A) · dY, two plain 2-D matMuls of explicitly transposed operands. tfjs's own matMul gradient
//    ("stock", impls tfjs-*-stock) uses matMul's transposeB / transposeA forms, which tfjs-wasm runs about 9× / 50×
//    slower than a plain matMul of the same size (512×768·768×3072 here: 90 ms plain, 0.9 s transposeB, 5.2 s
//    transposeA); the bench compares against the fastest form a tfjs user could write, as it does for the forward.
//    Same math: only where the transposes happen. The biases of the MLP are a plain add (their gradient is tfjs's
//    sum over rows) rather than tf.fused.matMul, whose gradient uses the transposed forms.
//  - the copy model's embedding: tf.gather on tfjs-cpu; on tfjs-wasm a one-hot [b·T, V] matMul, because gather's
//    gradient (UnsortedSegmentSum) has no tfjs-wasm kernel. Exact: each output is 1 · one row plus zeros.
//  - the block's loss: the step's value is the block's output [b·T, d] with upstream gradient gradOutput
//    (tf.valueAndGrads(f)(params, gradOutput)), and L = sum(output ⊙ gradOutput) is computed on the host in float64
//    from the output read back, as the attngraph trainer does; so both read back the same thing, and no float32 sum
//    of 10⁵–10⁶ products of either sign decides the check.
import type * as TF from "@tensorflow/tfjs-core";
import { ADAM_BETAS, ADAM_EPS, transpose2d, type TrainBlockProblem, type TrainCopyProblem } from "../problem.js";
import {
  forwardMatOps,
  tfjsBlockBody,
  tfjsBlockWeights,
  type Backend,
  type MatMul,
  type MatMulGrad,
  type MatOps,
  type TfjsBlockParams,
  type TfjsBlockWeights,
} from "./tfjs.js";
import type { Runner } from "./types.js";

/** A 2-D matMul whose gradient is two plain 2-D matMuls with explicitly transposed operands (see the top). */
export function transposedGradMatMul(tf: typeof TF): MatMul {
  const f = tf.customGrad<TF.Tensor2D>((...args) => {
    const [a, b, save] = args as [TF.Tensor2D, TF.Tensor2D, TF.GradSaveFunc];
    save([a, b]);
    return {
      value: tf.matMul<TF.Tensor2D>(a, b),
      gradFunc: (dy, [sa, sb]) => [tf.matMul(dy, tf.transpose(sb!)), tf.matMul(tf.transpose(sa!), dy)],
    };
  });
  return (a, b) => f(a, b);
}

/** The matMuls of a training step: see the top of this file. */
export function trainMatOps(tf: typeof TF, matMulGrad: MatMulGrad): MatOps {
  if (matMulGrad === "stock") return forwardMatOps(tf);
  const matMul = transposedGradMatMul(tf);
  return { matMul, linear: (a, w, bias) => tf.add(matMul(a, w), bias) };
}

const PARAMS = [
  "ln1w",
  "ln1b",
  "wqkvT",
  "woT",
  "ln2w",
  "ln2b",
  "w1T",
  "b1",
  "w2T",
  "b2",
] as const satisfies readonly (keyof TfjsBlockParams)[];

/** The block's parameters as tf.variables (the originals disposed), and its constants. */
function blockVariables(
  tf: typeof TF,
  w: TfjsBlockWeights,
): { vars: TF.Variable[]; withParams: (ps: readonly TF.Tensor[]) => TfjsBlockWeights; constants: TF.Tensor[] } {
  const vars = PARAMS.map((k) => tf.variable(w[k]));
  for (const k of PARAMS) w[k].dispose();
  const { mask, scale, eps, invSqrt2, half, one } = w;
  const constants = { mask, scale, eps, invSqrt2, half, one };
  const withParams = (ps: readonly TF.Tensor[]) =>
    ({ ...constants, ...Object.fromEntries(PARAMS.map((k, i) => [k, ps[i]!])) }) as TfjsBlockWeights;
  return { vars, withParams, constants: Object.values(constants) };
}

export interface TfjsTrainOptions {
  readonly threads: number;
  readonly matMulGrad: MatMulGrad;
  /** The attention core's form (MatOps.batchedHeads); default: batched for train-copy, per head for train-block. */
  readonly batchedHeads?: boolean;
  readonly note?: string;
}

/** A training runner on `backend`: each run is one step, resolving to its loss (read back); `checked` as attngraph's. */
export async function tfjsTrainRunner(
  tf: typeof TF,
  backend: Backend,
  p: TrainBlockProblem | TrainCopyProblem,
  options: TfjsTrainOptions,
): Promise<Runner> {
  const ops = { ...trainMatOps(tf, options.matMulGrad), batchedHeads: options.batchedHeads ?? p.kind === "train-copy" };
  const optimizer = tf.train.adam(p.lr, ADAM_BETAS[0], ADAM_BETAS[1], ADAM_EPS);
  const made = p.kind === "train-block" ? blockStep(tf, p, ops, optimizer) : copyStep(tf, backend, p, ops, optimizer);
  const notes = [options.note, made.note].filter((n): n is string => n !== undefined);
  const losses: number[] = [];
  const step = async () => {
    if (tf.getBackend() !== backend) await tf.setBackend(backend);
    const l = await made.step();
    if (losses.length < 2) losses.push(l);
    return l;
  };
  return {
    threads: options.threads,
    ...(notes.length ? { note: notes.join("; ") } : {}),
    run: async () => Float32Array.of(await step()),
    async checked() {
      while (losses.length < 2) await step();
      return Float32Array.from(losses);
    },
    async dispose() {
      optimizer.dispose();
      tf.dispose(made.tensors);
    },
  };
}

interface Step {
  /** One step: forward, backward, Adam; resolves to the loss read back to the host. */
  readonly step: () => Promise<number>;
  /** Everything to dispose at the end (variables and constants). */
  readonly tensors: TF.Tensor[];
  readonly note?: string;
}

/** train-block: L = sum(output ⊙ gradOutput), gradients by tf.valueAndGrads with gradOutput as the upstream gradient. */
function blockStep(tf: typeof TF, p: TrainBlockProblem, ops: MatOps, optimizer: TF.Optimizer): Step {
  const { b, t, d } = p.shape;
  const { vars, withParams, constants } = blockVariables(tf, tfjsBlockWeights(tf, p));
  return {
    tensors: [...vars, ...constants],
    async step() {
      // The input and upstream gradient go up each step, as the attngraph trainer's batch does.
      const x = tf.tensor2d(p.x, [b * t, d]);
      const dy = tf.tensor2d(p.gradOutput, [b * t, d]);
      const { value, grads } = tf.valueAndGrads((...ps: TF.Tensor[]) =>
        tfjsBlockBody(tf, p.shape, x, withParams(ps), ops),
      )(vars, dy);
      optimizer.applyGradients(Object.fromEntries(vars.map((v, i) => [v.name, grads[i]!])));
      tf.dispose([x, dy, ...grads]);
      const out = await value.data();
      value.dispose();
      let loss = 0;
      for (let i = 0; i < out.length; i++) loss += out[i]! * p.gradOutput[i]!;
      return loss;
    },
  };
}

/**
 * train-copy: embed.weight[tokens] + pos_embed → the block → output Linear → logits [b·T, V]; loss = mean over the
 * b·T positions of −log softmax(logits)[target] (tf.logSoftmax), by optimizer.minimize over the 14 parameters.
 */
function copyStep(tf: typeof TF, backend: Backend, p: TrainCopyProblem, ops: MatOps, optimizer: TF.Optimizer): Step {
  const { b, t, d } = p.shape;
  const V = p.vocab;
  const n = b * t;
  const {
    vars: blockVars,
    withParams,
    constants,
  } = blockVariables(tf, tfjsBlockWeights(tf, { ...p.block, shape: p.shape, scale: p.scale, eps: p.eps }));
  const embed = tf.variable(tf.tensor2d(p.embed, [V, d]));
  const pos = tf.variable(tf.tensor3d(p.pos, [1, t, d]));
  const wOutT = tf.variable(tf.tensor2d(transpose2d(p.wOut, V, d), [d, V]));
  const bOut = tf.variable(tf.tensor1d(p.bOut));
  const vars = [embed, pos, ...blockVars, wOutT, bOut];
  // tfjs-wasm has no kernel for gather's gradient (UnsortedSegmentSum): look the rows up as a one-hot matMul there.
  const oneHotEmbed = backend === "wasm";
  // One-hot rows as float32. Not tf.oneHot(…, "float32"): tfjs-wasm 4.22's OneHot kernel writes int32 bits into a
  // tensor that says float32 (1 reads as 1.4e-45); the int32 one-hot cast to float32 is right on both backends.
  const oneHot = (ids: TF.Tensor1D) => tf.cast(tf.oneHot(ids, V), "float32") as TF.Tensor2D;
  return {
    tensors: [...vars, ...constants],
    ...(oneHotEmbed ? { note: "embedding as one-hot matMul" } : {}),
    async step() {
      const tokens = tf.tensor1d(p.tokens, "int32");
      const targets = tf.tensor1d(p.tokens, "int32"); // the copy task: targets = tokens
      const cost = optimizer.minimize(
        () => {
          const rows = oneHotEmbed ? ops.matMul(oneHot(tokens), embed) : tf.gather(embed, tokens); // [b·T, d]
          const x = tf.reshape(tf.add(tf.reshape(rows, [b, t, d]), pos), [n, d]) as TF.Tensor2D;
          const logits = ops.linear(tfjsBlockBody(tf, p.shape, x, withParams(blockVars), ops), wOutT, bOut); // [b·T, V]
          const picked = tf.sum(tf.mul(oneHot(targets), tf.logSoftmax(logits)), 1); // [b·T]
          return tf.neg(tf.mean(picked)) as TF.Scalar;
        },
        true,
        vars,
      )!;
      tf.dispose([tokens, targets]);
      const loss = (await cost.data())[0]!;
      cost.dispose();
      return loss;
    },
  };
}
