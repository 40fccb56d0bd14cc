import type { LinearGeluAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { gelu } from "./gelu-math.js";
import { matmulWeightT } from "./linear.js";

/** linear-gelu: gelu(x · Wᵀ + b); with contrib ops the bias joins the activation (BiasGelu, FastGelu's bias input). */
export const linearGelu: OpLowering = (l) =>
  gelu(l, matmulWeightT(l), l.input("bias"), (l.node.attrs as unknown as LinearGeluAttrs).approximate);
