import type { OpLowering } from "../lowering.js";
import { groupedMatMul } from "./heads.js";

/** weighted-sum: weights [B, H, L, S] · v [B, Hkv, S, D] → [B, H, L, D]; value heads shared like key heads. */
export const weightedSum: OpLowering = (l) =>
  groupedMatMul(l, l.required("weights"), l.required("v"), l.shapeOf("weights")[1]!, l.shapeOf("v")[1]!);
