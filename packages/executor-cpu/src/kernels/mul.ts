// mul: elementwise product with broadcasting (add's rules), for the gate of a SiLU-gated MLP (silu(gate) · up). The
// strided loop is add's (add.ts, broadcastImpl), with the product in place of the sum.
import { broadcastKernel } from "./add.js";

/** Inputs: a [...], b [...] broadcastable → the broadcast shape. */
export const mulKernel = broadcastKernel("mul");
