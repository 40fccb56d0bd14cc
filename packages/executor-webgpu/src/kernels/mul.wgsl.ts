// mul: a · b with add's broadcasting, over any strides (the gate product of a SiLU-gated MLP): add.wgsl.ts's program
// with the product in place of the sum.
import type { WebGpuKernel } from "../executor.js";
import { broadcastKernel } from "./add.wgsl.js";

export const mulKernel: WebGpuKernel = broadcastKernel("mul");
