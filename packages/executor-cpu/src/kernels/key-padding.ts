// The optional key padding mask of the fused attentions (attention, attention-lse, attention-grad), read and checked in
// one place: every value exactly 0 or 1 (mask.ts's checkKeyPadding) before anything is computed.
import type { Tensor } from "@attngraph/tensor";
import { optionalInput, type Call } from "./adapter.js";
import { checkKeyPadding } from "./mask.js";

/** The key padding mask [B, S] in `slot`, checked; undefined when absent. */
export function keyPaddingInput(call: Call, slot: number): Tensor | undefined {
  const pad = optionalInput(call, slot, "keyPaddingMask");
  if (pad !== undefined) checkKeyPadding(call, pad);
  return pad;
}
