// out-proj is projection's math under its own op kind (so graphs, taps and golden cases can name the output
// projection): the same kernel, not a copy of it.
import type { WebGpuKernel } from "../executor.js";
import { projectionKernel } from "./projection.wgsl.js";

/** Inputs: x [B, L, E], weight [Eout, E], optional bias [Eout] → [B, L, Eout]. */
export const outProjKernel: WebGpuKernel = projectionKernel;
