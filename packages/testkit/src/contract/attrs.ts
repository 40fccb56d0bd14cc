// Normalized attributes, as the runtime passes them to `dispatch`: every attribute present, defaults filled in. The
// types come from the op declarations in @attngraph/graph, so an attribute added there breaks this file's build
// instead of silently going untested.
import type { DropoutAttrs, MaskAttrs, ReshapeAttrs, SliceAttrs, SoftmaxAttrs, TransposeAttrs } from "@attngraph/graph";

export const attrs = {
  /** projection, score, weighted-sum and out-proj have no attributes. */
  none: (): Record<string, never> => ({}),
  mask: (a: Partial<MaskAttrs> = {}): MaskAttrs => ({ causal: false, window: null, alignment: "top-left", ...a }),
  softmax: (scale = 1): SoftmaxAttrs => ({ scale }),
  dropout: (a: Partial<DropoutAttrs> = {}): DropoutAttrs => ({ rate: 0, seed: 0, training: false, ...a }),
  reshape: (shape: readonly number[]): ReshapeAttrs => ({ shape }),
  transpose: (perm: readonly number[]): TransposeAttrs => ({ perm }),
  slice: (axis: number, start: number, size: number): SliceAttrs => ({ axis, start, size }),
};

/** Valid attributes for each built-in op kind, for asking `supports` (spread: supports takes a plain record). */
export const sampleAttrs: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  projection: attrs.none(),
  reshape: { ...attrs.reshape([2, 3]) },
  transpose: { ...attrs.transpose([1, 0]) },
  slice: { ...attrs.slice(0, 0, 1) },
  score: attrs.none(),
  mask: { ...attrs.mask({ causal: true }) },
  softmax: { ...attrs.softmax(0.5) },
  dropout: { ...attrs.dropout({ rate: 0.1, seed: 1, training: true }) },
  "weighted-sum": attrs.none(),
  "out-proj": attrs.none(),
};
