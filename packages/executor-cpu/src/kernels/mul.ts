// mul: elementwise product with broadcasting (add's rules), for the gate of a SiLU-gated MLP (silu(gate) · up). The
// kernel is add's (add.ts, broadcastKernel), with the product in place of the sum.
import { broadcastKernel } from "./add.js";

/** Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export const mulKernel = broadcastKernel("mul");
