// The checks the wasm executor makes of values crossing its boundary: a value handed to it (one of its own, not
// released), a download (float32, as the contract types it) and a kernel's result (of the node's shape). Each throws
// an AttnGraphError naming the subject, so that a wrong value fails where it enters rather than downstream.
import { AttnGraphError, describe, formatShape, sameShape } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import { WasmValue } from "./value.js";

const EXECUTOR = "wasm";

/** A value of this executor that was not released (whether it is of the current memory is the executor's check). */
export function checkUnreleased(v: WasmValue, subject: string): void {
  if (!(v instanceof WasmValue)) {
    throw new AttnGraphError("input", describe(subject, "not a value of executor wasm", "a WasmValue", typeof v), {
      subject,
      expected: "a WasmValue",
      got: typeof v,
    });
  }
  if (v.released || v.block.freed) {
    throw new AttnGraphError("input", describe(subject, "value was released", "a live value", "a released one"), {
      subject,
      expected: "a live value",
      got: "a released one",
    });
  }
}

/**
 * download() gives float32 tensors (the contract's type, and every op's output is one): an int32 value is an "input"
 * error pointing at downloadAny() rather than a Tensor whose type would lie about its data.
 */
export function checkFloat32(v: WasmValue): void {
  if (v.dtype !== "float32") {
    const subject = "download";
    const got = `an int32 value ${formatShape(v.shape)}`;
    const what = "download() gives float32 tensors (every op output is float32); use downloadAny() for an int32 value";
    throw new AttnGraphError("input", describe(subject, what, "a float32 value", got), {
      subject,
      expected: "a float32 value",
      got,
    });
  }
}

/** A kernel may return anything; a wrong shape caught here names the node instead of failing downstream. */
export function checkOutput(call: KernelCall<WasmValue>, out: unknown): WasmValue {
  if (!(out instanceof WasmValue) || !sameShape(out.shape, call.outShape)) {
    const expected = formatShape(call.outShape);
    const got = out instanceof WasmValue ? formatShape(out.shape) : typeof out;
    throw new AttnGraphError(
      "kernel-output",
      describe(call.node, `kernel for op ${call.kind} on executor ${EXECUTOR} returned the wrong shape`, expected, got),
      {
        subject: call.node,
        expected,
        got,
      },
    );
  }
  return out;
}
