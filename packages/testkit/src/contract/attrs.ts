// Normalized attributes, as the runtime passes them to `dispatch`: every attribute present, defaults filled in. The
// types come from the op declarations in @attngraph/graph, so an attribute added there breaks this file's build
// instead of silently going untested.
import type {
  AdamMomentAttrs,
  AdamStepAttrs,
  AlibiAttrs,
  CrossEntropyAttrs,
  CrossEntropyGradAttrs,
  DropoutAttrs,
  EmbeddingGradAttrs,
  GeluAttrs,
  GeluGradAttrs,
  LayerNormAttrs,
  LayerNormGradAttrs,
  LinearWeightGradAttrs,
  MaskAttrs,
  MaskGradAttrs,
  PadAttrs,
  ReshapeAttrs,
  RopeAttrs,
  SgdMomentumAttrs,
  SgdStepAttrs,
  SliceAttrs,
  SoftmaxAttrs,
  SoftmaxGradAttrs,
  SumToAttrs,
  TransposeAttrs,
} from "@attngraph/graph";

/** RoPE's attributes as a kernel gets them: the offset bound to an integer (the contract calls kernels directly). */
export type BoundRopeAttrs = Omit<RopeAttrs, "positionOffset"> & { readonly positionOffset: number };

export const attrs = {
  /** projection, score, weighted-sum and out-proj have no attributes. */
  none: (): Record<string, never> => ({}),
  mask: (a: Partial<MaskAttrs> = {}): MaskAttrs => ({ causal: false, window: null, alignment: "top-left", scale: 1, ...a }),
  softmax: (scale = 1): SoftmaxAttrs => ({ scale }),
  dropout: (a: Partial<DropoutAttrs> = {}): DropoutAttrs => ({ rate: 0, seed: 0, training: false, ...a }),
  reshape: (shape: readonly number[]): ReshapeAttrs => ({ shape }),
  transpose: (perm: readonly number[]): TransposeAttrs => ({ perm }),
  slice: (axis: number, start: number, size: number): SliceAttrs => ({ axis, start, size }),
  alibi: (a: Partial<AlibiAttrs> = {}): AlibiAttrs => ({ slopes: null, scale: 1, alignment: "top-left", ...a }),
  rope: (a: Partial<BoundRopeAttrs> = {}): BoundRopeAttrs => ({ base: 10000, rotaryDim: null, positionOffset: 0, inverse: false, ...a }),
  layerNorm: (eps = 1e-5): LayerNormAttrs => ({ eps }),
  gelu: (approximate: GeluAttrs["approximate"] = "none"): GeluAttrs => ({ approximate }),
  crossEntropy: (a: Partial<CrossEntropyAttrs> = {}): CrossEntropyAttrs => ({ ignoreIndex: null, reduction: "mean", ...a }),
  // Backward ops.
  /** sum-to's `shape` is the call's outShape, concrete at dispatch. */
  sumTo: (shape: readonly number[]): SumToAttrs => ({ shape }),
  pad: (axis: number, before: number, after: number): PadAttrs => ({ axis, before, after }),
  linearWeightGrad: (): LinearWeightGradAttrs => ({}),
  softmaxGrad: (scale = 1): SoftmaxGradAttrs => ({ scale }),
  maskGrad: (scale = 1): MaskGradAttrs => ({ scale }),
  layerNormGrad: (eps = 1e-5): LayerNormGradAttrs => ({ eps }),
  geluGrad: (approximate: GeluGradAttrs["approximate"] = "none"): GeluGradAttrs => ({ approximate }),
  embeddingGrad: (rows: number): EmbeddingGradAttrs => ({ rows }),
  crossEntropyGrad: (a: Partial<CrossEntropyGradAttrs> = {}): CrossEntropyGradAttrs => ({ ignoreIndex: null, reduction: "mean", ...a }),
  // Optimizer ops.
  /** beta has no default (β1 or β2); square false, weightDecay 0. */
  adamMoment: (a: Partial<AdamMomentAttrs> & Pick<AdamMomentAttrs, "beta">): AdamMomentAttrs => ({ square: false, weightDecay: 0, ...a }),
  /** lr has no default; the others are torch.optim.Adam's: betas (0.9, 0.999), eps 1e-8, no weight decay. */
  adamStep: (a: Partial<AdamStepAttrs> & Pick<AdamStepAttrs, "lr">): AdamStepAttrs => ({ beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false, ...a }),
  /** momentum has no default; dampening 0, weightDecay 0 (torch.optim.SGD's). */
  sgdMomentum: (a: Partial<SgdMomentumAttrs> & Pick<SgdMomentumAttrs, "momentum">): SgdMomentumAttrs => ({ dampening: 0, weightDecay: 0, ...a }),
  /** lr has no default; momentum 0, nesterov false, weightDecay 0 (torch.optim.SGD's). */
  sgdStep: (a: Partial<SgdStepAttrs> & Pick<SgdStepAttrs, "lr">): SgdStepAttrs => ({ momentum: 0, nesterov: false, weightDecay: 0, ...a }),
};

/** Valid attributes for each built-in op kind, for asking `supports` (spread: supports takes a plain record). */
export const sampleAttrs: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  projection: attrs.none(),
  reshape: { ...attrs.reshape([2, 3]) },
  transpose: { ...attrs.transpose([1, 0]) },
  slice: { ...attrs.slice(0, 0, 1) },
  rope: { ...attrs.rope({ rotaryDim: 4, positionOffset: 3 }) },
  score: attrs.none(),
  alibi: { ...attrs.alibi({ scale: 0.5 }) },
  mask: { ...attrs.mask({ causal: true }) },
  softmax: { ...attrs.softmax(0.5) },
  dropout: { ...attrs.dropout({ rate: 0.1, seed: 1, training: true }) },
  "weighted-sum": attrs.none(),
  "out-proj": attrs.none(),
  "layer-norm": { ...attrs.layerNorm() },
  gelu: { ...attrs.gelu("tanh") },
  add: attrs.none(),
  "rms-norm": { eps: 1e-6 },
  pointwise: { expr: { op: "mul", args: [{ op: "input", name: "x0", index: [] }, 2] } },
  mul: attrs.none(),
  embedding: attrs.none(),
  "position-embedding": { offset: 2 },
  "cross-entropy": { ...attrs.crossEntropy({ ignoreIndex: -100 }) },
  "linear-gelu": { approximate: "none" },
  "add-layer-norm": { eps: 1e-5 },
  "sum-to": { ...attrs.sumTo([1, 3]) },
  pad: { ...attrs.pad(-1, 1, 2) },
  "linear-weight-grad": { ...attrs.linearWeightGrad() },
  "softmax-grad": { ...attrs.softmaxGrad(0.5) },
  "mask-grad": { ...attrs.maskGrad(0.5) },
  "layer-norm-grad": { ...attrs.layerNormGrad() },
  "layer-norm-weight-grad": { ...attrs.layerNormGrad() },
  "gelu-grad": { ...attrs.geluGrad("tanh") },
  "rms-norm-grad": { eps: 1e-6 },
  "rms-norm-weight-grad": { eps: 1e-6 },
  "embedding-grad": { ...attrs.embeddingGrad(5) },
  "position-embedding-grad": { rows: 8, offset: 2 },
  "cross-entropy-grad": { ...attrs.crossEntropyGrad({ ignoreIndex: -100 }) },
  "attention-lse": { causal: true, window: 4, alignment: "bottom-right", scale: 0.5 },
  "attention-grad": { causal: true, window: null, alignment: "top-left", scale: 0.5, dropoutRate: 0.1, dropoutSeed: 3, training: true, wrt: "k" },
  "adam-moment": { ...attrs.adamMoment({ beta: 0.999, square: true, weightDecay: 0.01 }) },
  "adam-step": { ...attrs.adamStep({ lr: 1e-3, weightDecay: 0.01, decoupled: true }) },
  "sgd-momentum": { ...attrs.sgdMomentum({ momentum: 0.9, dampening: 0.1, weightDecay: 0.01 }) },
  "sgd-step": { ...attrs.sgdStep({ lr: 1e-2, momentum: 0.9, nesterov: true, weightDecay: 0.01 }) },
  "sum-squares": attrs.none(),
  "clip-by-norm": { maxNorm: 1, eps: 1e-6 },
  "grad-accumulate": { scale: 0.25 },
};
