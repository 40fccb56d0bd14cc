import type { OpLowering } from "../lowering.js";
import { scores } from "./heads.js";

/** score: q [B, H, L, D] · kᵀ per batch and head → [B, H, L, S]; key heads shared by groups of query heads. */
export const score: OpLowering = (l) => scores(l, l.required("q"), l.required("k"), l.shapeOf("q"), l.shapeOf("k"));
