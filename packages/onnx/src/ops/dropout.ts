import type { DropoutAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { requireNoDropout } from "./no-dropout.js";

/** dropout: the identity in eval mode or at rate 0; training-mode dropout fails the export (no-dropout.ts). */
export const dropout: OpLowering = (l) => {
  const { rate, training } = l.node.attrs as unknown as DropoutAttrs;
  requireNoDropout(l, rate, training, { rate: "rate" });
  return l.required("x");
};
