// projection: y = x · Wᵀ + b over the last axis (nn.Linear layout), on the module's 5×8 SIMD tile. Wᵀ is W with its
// strides swapped (packed by the module: once per uploaded weight, kept beside it, else per call); x is read in place
// when its rows have one stride. With a signal, a big call runs in chunks of rows (chunks.ts). linear-gelu is the
// same product with the activation run on each chunk's rows of the output (`linear` below).
import { withCleanup } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { optionalInput, requireInput, fillingChunked, type Call } from "./adapter.js";
import { matmul, rowsOperand } from "./matmul.js";

/** Inputs: x [..., In], weight [Out, In], optional bias [Out] → [..., Out]. Also serves out-proj. */
export const projectionKernel = chunkedKernel((call, ctx) => linear(call, ctx));

/** What runs on the output rows of each chunk right after the product wrote them, and its work per element. */
export interface Epilogue {
  /** Multiply-adds of the SIMD matmul per output element, for the chunk sizes. */
  readonly work: number;
  /** Rewrites rows [r0, r1) of the dense output `out` ([rows, Out]) in place. */
  readonly rows: (out: WasmValue, r0: number, r1: number) => void;
}

/**
 * The projection's product, x [..., In] · Wᵀ [In, Out] + bias [Out] → [..., Out], in chunks of rows; with
 * an `epilogue`, each chunk's rows are then rewritten by it in place (linear-gelu), so the pre-activation never
 * becomes a value of its own.
 */
export function linear(call: Call, ctx: WasmContext, epilogue?: Epilogue): WasmValue | Promise<WasmValue> {
  const x = requireInput(call, 0, "x");
  const w = requireInput(call, 1, "weight");
  const b = optionalInput(call, 2, "bias");
  const [nOut, nIn] = w.shape as [number, number];
  const shape = call.outShape; // [..., Out] by the shape rule
  const rows = shape.slice(0, -1).reduce((p, d) => p * d, 1);
  const out = ctx.output(call, shape);
  return fillingChunked(call, ctx, out, () => {
    const { a, temp } = rowsOperand(ctx, x, call.node);
    const wt = { address: w.address, rowStride: w.strides[1]!, colStride: w.strides[0]! }; // Wᵀ [In, Out]
    const bias = b === undefined ? undefined : { address: b.address, stride: b.strides[0]! };
    // An uploaded weight is packed into the matmul's panels once and kept (derived.ts); anything else per call.
    const packed = ctx.packedMatmulB(w, wt, nIn, nOut, call.node);
    // Rows are independent: a chunk is the same matmul over rows [r0, r1).
    const part = (r0: number, r1: number) => {
      const ar = { address: a.address + r0 * a.rowStride * 4, rowStride: a.rowStride, colStride: 1 };
      matmul(ctx, r1 - r0, nOut, nIn, ar, wt, out.address + r0 * nOut * 4, nOut, bias, call.node, packed);
      epilogue?.rows(out, r0, r1);
    };
    const rowWork = nIn * nOut + (epilogue === undefined ? 0 : nOut * epilogue.work);
    return withCleanup(
      () => overRows(call, ctx, rows, rowWork, part),
      () => temp && ctx.release(temp),
    );
  });
}
