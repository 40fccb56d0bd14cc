import type { OpLowering } from "../lowering.js";
import { linear } from "./linear.js";

/** projection: x · Wᵀ (+ b); a fused QKV projection is the same node with a stacked weight, sliced after. */
export const projection: OpLowering = linear;
