// Dropout has an ONNX form only where it is the identity. In training mode with a rate above 0 attngraph draws its
// mask from a counter-based hash of the seed and the element index, the same on every executor; ONNX's Dropout draws
// from the runtime's own generator, so no ONNX op gives the same mask, and an export that pretended would be wrong.
import type { Lowering } from "../lowering.js";

/** Fails the export when the node drops elements; returns normally when it is the identity. */
export function requireNoDropout(l: Lowering, rate: number, training: boolean, fields: { rate: string }): void {
  if (training && rate > 0) {
    l.unsupported(
      "training-mode dropout has no ONNX form (its counter-based mask cannot be reproduced by an ONNX op); export the graph in eval mode",
      `training: false or ${fields.rate}: 0`,
      `training: true, ${fields.rate}: ${rate}`,
    );
  }
}
