import type { GeluAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { gelu as geluOf } from "./gelu-math.js";

/** gelu: the exact erf form or the tanh approximation, as the node's `approximate` says (gelu-math.ts). */
export const gelu: OpLowering = (l) =>
  geluOf(l, l.required("x"), undefined, (l.node.attrs as unknown as GeluAttrs).approximate);
