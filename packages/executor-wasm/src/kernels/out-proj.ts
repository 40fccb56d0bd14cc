// out-proj is projection's math under its own op kind, so graphs, taps and golden cases can name the output projection.
import type { ChunkedWasmKernel } from "../executor.js";
import { projectionKernel } from "./projection.js";

/** Inputs: x [B, L, E], weight [Eout, E], optional bias [Eout] → [B, L, Eout]. */
export const outProjKernel: ChunkedWasmKernel = projectionKernel;
