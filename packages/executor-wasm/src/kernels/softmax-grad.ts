// softmax-grad: the input gradient of y = softmax(scale · x) over the last axis, from y: dx = scale · y ⊙ (grad −
// Σ_row grad ⊙ y), in float64 in the module (assembly/softmax-grad.ts). A fully masked row (y all 0) gives exactly 0
// whatever its grad; NaN elsewhere propagates by the formula. y and grad may be any views. With a signal, a big call
// runs in chunks of rows (chunks.ts).
import { chunkedKernel } from "../chunks.js";
import { scaledRows, type ScaledRows } from "./scaled-rows.js";

/** Work per element in multiply-adds of the SIMD matmul: two float64 passes over two rows. */
const SOFTMAX_GRAD: ScaledRows = { entry: "softmaxGrad", inputs: ["y", "grad"], work: 8 };

/** Inputs: y [..., S] (the softmax's output), grad [..., S]; attrs { scale } → [..., S]. */
export const softmaxGradKernel = chunkedKernel((call, ctx) => scaledRows(call, ctx, SOFTMAX_GRAD));
