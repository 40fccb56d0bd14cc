import type { OpLowering } from "../lowering.js";
import { linear } from "./linear.js";

/** out-proj: the merged heads [B, L, E] · Wᵀ (+ b), the same math as projection. */
export const outProj: OpLowering = linear;
