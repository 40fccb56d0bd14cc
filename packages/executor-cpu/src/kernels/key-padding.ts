// The optional key padding mask [B, S] of mask and the fused attentions (attention, attention-lse, attention-grad), read
// and checked in one place: every value exactly 0 or 1 before anything is computed.
import type { Tensor } from "@attngraph/tensor";
import { keyPaddingError } from "@attngraph/graph";
import { optionalInput, type Call } from "./adapter.js";
import type { StridedView } from "./strided.js";

/** The key padding mask [B, S] in `slot`, checked; undefined when absent. */
export function keyPaddingInput(call: Call, slot: number): Tensor | undefined {
  const pad = optionalInput(call, slot, "keyPaddingMask");
  if (pad !== undefined) checkKeyPadding(call, pad);
  return pad;
}

/** The row-major index of the first padding value that is not exactly 0 or 1 (NaN included), or -1 when all are. */
export function findInvalidPadding(keyPaddingMask: StridedView): number {
  const [nb, ns] = keyPaddingMask.shape as readonly number[] as [number, number];
  const [ps0, ps1] = keyPaddingMask.strides as [number, number];
  const pd = keyPaddingMask.data;
  for (let b = 0; b < nb; b++) {
    for (let j = 0, p = keyPaddingMask.offset + b * ps0; j < ns; j++, p += ps1) {
      const v = pd[p]!;
      if (v !== 0 && v !== 1) return b * ns + j;
    }
  }
  return -1;
}

/**
 * Checks that every value of a key padding mask [B, S] (its shape is the op's shape rule's) is exactly 0 or 1, before
 * anything is written: a 2 or a NaN is a caller's bug, never silently "not padded".
 */
function checkKeyPadding(call: Call, pad: Tensor): void {
  const ns = pad.shape[1]!;
  const bad = findInvalidPadding(pad);
  if (bad >= 0) throw keyPaddingError(call, pad.toFloat32Array()[bad], Math.floor(bad / ns), bad % ns);
}
