// Test helpers for the ways many kernel tests dispatch one op besides onWasm: in chunks (a signal on an executor of a
// tiny chunkWork, where a kernel must answer with a Promise) and a bad call (for the error it throws; into a planned
// output that must stay untouched). Each releases what it uploads, so a test can check that nothing is left allocated.
import { expect } from "vitest";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { Tensor, sizeOf, type AttnGraphError, type AnyTensor, type Shape } from "@attngraph/tensor";
import type { WasmExecutor } from "./executor.js";
import { uploadView, type OpCall } from "./test-util.js";
import type { WasmValue } from "./value.js";

/**
 * Dispatches `op` on `tiny` with a signal, every input uploaded with its own layout (uploadView); expects a Promise,
 * and that nothing is left allocated on `tiny` once the output and inputs are released. The output as a host tensor.
 */
export async function dispatchInChunks(
  tiny: WasmExecutor,
  op: OpCall,
  tensors: readonly (AnyTensor | undefined)[],
): Promise<Tensor> {
  const inputs = tensors.map((t) => t && uploadView(tiny, t));
  const pending = tiny.dispatch({ ...op, inputs, signal: new AbortController().signal });
  expect(pending).toBeInstanceOf(Promise);
  const out = (await pending) as WasmValue;
  const host = tiny.download(out);
  for (const v of [out, ...inputs]) if (v) tiny.release(v);
  expect(tiny.inUseBytes).toBe(0);
  return host;
}

/** A caller of `kind` at `node` on `ex` with attrs and host inputs (uploaded, released after): the error it throws. */
export function failingCall(
  ex: WasmExecutor,
  kind: string,
  node: string,
  outShape: Shape,
): (attrs: Record<string, unknown>, inputs: readonly (AnyTensor | undefined)[]) => AttnGraphError {
  return (attrs, inputs) => {
    const values = inputs.map((t) => t && ex.upload(t));
    try {
      return thrownError(() => ex.dispatch({ kind, node, attrs, inputs: values, outShape }));
    } finally {
      for (const v of values) if (v) ex.release(v);
    }
  };
}

/**
 * Dispatches `op` on `ex` (its inputs already there) into a planned output filled with 42, expecting an error: the
 * error, once the output is checked untouched (a kernel refuses a bad call before it writes anything).
 */
export function failsUntouched(
  ex: WasmExecutor,
  op: OpCall,
  inputs: readonly (WasmValue | undefined)[],
): AttnGraphError {
  const out = ex.upload(Tensor.from(new Array<number>(sizeOf(op.outShape)).fill(42), op.outShape));
  try {
    const e = thrownError(() => ex.dispatch({ ...op, inputs, out }));
    const kept = ex
      .download(out)
      .toFloat32Array()
      .every((v) => v === 42);
    expect(kept, "the planned output is untouched").toBe(true);
    return e;
  } finally {
    ex.release(out);
  }
}
