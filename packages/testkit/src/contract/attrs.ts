// Normalized attributes, as the runtime passes them to `dispatch`: every attribute present, defaults filled in. The
// types come from the op declarations in @attngraph/graph, so an attribute added there breaks this file's build
// instead of silently going untested.
import type { AlibiAttrs, CrossEntropyAttrs, GeluAttrs, LayerNormAttrs, DropoutAttrs, MaskAttrs, ReshapeAttrs, RopeAttrs, SliceAttrs, SoftmaxAttrs, TransposeAttrs } from "@attngraph/graph";

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
  rope: (a: Partial<RopeAttrs> = {}): RopeAttrs => ({ base: 10000, rotaryDim: null, positionOffset: 0, ...a }),
  layerNorm: (eps = 1e-5): LayerNormAttrs => ({ eps }),
  gelu: (approximate: GeluAttrs["approximate"] = "none"): GeluAttrs => ({ approximate }),
  crossEntropy: (a: Partial<CrossEntropyAttrs> = {}): CrossEntropyAttrs => ({ ignoreIndex: null, reduction: "mean", ...a }),
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
  embedding: attrs.none(),
  "cross-entropy": { ...attrs.crossEntropy({ ignoreIndex: -100 }) },
  "linear-gelu": { approximate: "none" },
  "add-layer-norm": { eps: 1e-5 },
};
