// One kernel call on host tensors, run on a wasm executor the way the chunk tests run it: uploaded, dispatched (with a
// signal where the test wants chunks, awaiting the Promise that answers), downloaded and released. chunks.test,
// attention-grad.test and attention-mods.test each wrote this.
import { expect } from "vitest";
import type { AnyTensor, Shape, Tensor } from "@attngraph/tensor";
import type { WasmExecutor } from "./executor.js";

/** A kernel call on host tensors, uploaded to an executor on demand. */
export interface HostCall {
  readonly kind: string;
  readonly node: string;
  readonly attrs: Record<string, unknown>;
  readonly inputs: readonly (AnyTensor | undefined)[];
  readonly outShape: Shape;
}

/**
 * `call` on `ex`, its output as a dense host tensor, nothing of it left allocated. With a signal the dispatch may answer
 * in chunks; `chunked` expects it to (a Promise).
 */
export async function runHostCall(
  ex: WasmExecutor,
  call: HostCall,
  signal?: AbortSignal,
  chunked = false,
): Promise<Tensor> {
  const inputs = call.inputs.map((t) => (t === undefined ? undefined : ex.upload(t)));
  try {
    const pending = ex.dispatch({ ...call, inputs, ...(signal ? { signal } : {}) });
    if (chunked) expect(pending).toBeInstanceOf(Promise);
    const out = await pending;
    const host = ex.download(out).contiguous();
    ex.release(out);
    return host;
  } finally {
    for (const v of inputs) if (v) ex.release(v);
  }
}
