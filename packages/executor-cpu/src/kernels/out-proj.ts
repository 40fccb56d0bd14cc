// out-proj is projection's math under its own op kind, so graphs, taps and golden cases can name the output
// projection. Aliases, not copies: one loop to keep correct.
import type { ChunkedCpuKernel } from "../executor.js";
import { projectionImpl, projectionKernel } from "./projection.js";

/** context [B, L, E] · Wᵀ (+ b) → [B, L, Eout]; the same function as `projectionImpl`. */
export const outProjImpl: typeof projectionImpl = projectionImpl;

/** Inputs: x [B, L, E], weight [Eout, E], optional bias [Eout] → [B, L, Eout]. */
export const outProjKernel: ChunkedCpuKernel = projectionKernel;
