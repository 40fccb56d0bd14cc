// Kernel checks that need something only the executor knows (where a value lives, what it holds, a dim bound at run
// time), so each executor finds the fault its own way; the rule and the error are written once here, so all three
// refuse the same calls with the same error.
import { type AttnGraphError, ShapeError, formatShape, sizeOf, type Shape } from "@attngraph/tensor";
import { checkKvAppend } from "./kernel-checks-attention.js";
import { type CallInfo, type Shaped, type Strided, kernelInputError } from "./kernel-checks.js";

/**
 * A key padding mask [B, S] value at [b, j] that is not exactly 0 or 1 (NaN included): a 2 or a NaN is a caller's
 * bug, never silently "not padded". Each executor scans the values where it holds them.
 */
export function keyPaddingError(call: CallInfo, value: number | undefined, b: number, j: number): AttnGraphError {
  return kernelInputError(
    call,
    "keyPaddingMask",
    "key padding values must be 1 (padded key) or 0 (real key)",
    "0 or 1",
    `${value} at [${b}, ${j}]`,
  );
}

/**
 * checkKvAppend, plus: x must not share memory with the cache it is written into (`xInCache`, which only the executor
 * can tell), since x read from the cache's own memory could be overwritten before it is read.
 */
export function checkKvAppendApart(
  call: CallInfo,
  cache: Strided,
  x: Shaped,
  xInCache: boolean,
): { readonly past: number; readonly shift: number } {
  const checked = checkKvAppend(call, cache, x);
  if (xInCache)
    throw kernelInputError(
      call,
      "x",
      "x must not be a view of the cache it is written into",
      "a value of its own",
      "a view of the cache",
    );
  return checked;
}

/**
 * reshape's element count against `call.outShape`: the declaration's shape rule cannot count elements when the shape
 * attribute names dims ("B", "T"), which reach the kernel bound only in outShape.
 */
export function checkReshapeSize(call: CallInfo & { readonly outShape: Shape }, x: Shaped): void {
  const shape = call.outShape;
  const size = sizeOf(x.shape);
  if (sizeOf(shape) !== size || shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new ShapeError(
      `${call.node}.shape`,
      "element count must stay the same",
      `a shape of ${size} elements`,
      `${formatShape(shape)} from ${formatShape(x.shape)}`,
    );
  }
}
