// mask-grad: the backward of mask and ALiBi. Read from the forward output, so every hiding rule (causal, window,
// padding, user mask, −∞ bias) is covered without repeating it: a score shown as −∞ got no gradient.
// out = masked == −∞ ? 0 : scale · grad, elementwise (the strided loop is elementwise-pair.ts's). Only −∞ hides: a +∞
// or NaN in `masked` came from the scores themselves, not from the mask, so its gradient passes (and a NaN in grad
// stays NaN there).
import type { MaskGradAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { requireInput, attrsOf } from "./adapter.js";
import { writePairRows } from "./elementwise-pair.js";

/** Inputs: grad [...], masked [...] (the forward output); attrs { scale } → grad's shape. */
export const maskGradKernel = chunkedKernel((call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const grad = requireInput(call, 0, "grad");
  const masked = requireInput(call, 1, "masked");
  const { scale } = attrsOf<MaskGradAttrs>(call);
  return writePairRows(call, chunkWork, "mask-grad", grad, masked, scale);
});
