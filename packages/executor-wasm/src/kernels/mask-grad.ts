// mask-grad: the input gradient of mask and ALiBi, read from their output: 0 where `masked` is −∞ (a hidden score gets
// no gradient), scale · grad everywhere else (NaN and +∞ included), one float64 product rounded once, in the module
// (assembly/softmax-grad.ts `maskGrad`). Both inputs may be any views. With a signal, a big call runs in chunks of rows.
import { chunkedKernel } from "../chunks.js";
import { scaledRows, type ScaledRows } from "./scaled-rows.js";

/** Work per element in multiply-adds of the SIMD matmul: two loads, a compare and a float64 product. */
const MASK_GRAD: ScaledRows = { entry: "maskGrad", inputs: ["grad", "masked"], work: 3 };

/** Inputs: grad [...], masked [...] (the forward output); attrs { scale } → [...]. */
export const maskGradKernel = chunkedKernel((call, ctx) => scaledRows(call, ctx, MASK_GRAD));
