import type { SoftmaxAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { maskedSoftmax } from "./masked-softmax.js";

/** softmax: softmax(scale · x) over the last axis; a fully masked row gives zeros (masked-softmax.ts). */
export const softmax: OpLowering = (l) =>
  maskedSoftmax(l, l.required("x"), (l.node.attrs as unknown as SoftmaxAttrs).scale);
