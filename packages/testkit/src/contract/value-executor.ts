// An executor as the kernel tests drive it, one synchronous call at a time: host tensors in, its own values between
// calls, host tensors out. The cpu's values are host tensors; the wasm executor's live in its module until released.
// Tests written against this (the golden chain, the optimizer loops) run unchanged on either.
import type { AnyTensor, Shape, Tensor } from "@attngraph/tensor";

export interface ValueExecutor<V> {
  upload(t: Tensor): V;
  dispatch(
    kind: string,
    node: string,
    attrs: Record<string, unknown>,
    inputs: readonly (V | undefined)[],
    outShape: Shape,
  ): V;
  download(v: V): Tensor;
  /** Frees a value no call reads any more. */
  release(v: V): void;
}

/** An executor whose upload, download and unsignalled dispatch answer synchronously (the cpu's and wasm's). */
export interface SyncExecutor<V> {
  upload(t: AnyTensor): V;
  download(v: V): Tensor;
  release?(v: V): void;
  dispatch(call: {
    kind: string;
    node: string;
    attrs: Record<string, unknown>;
    inputs: readonly (V | undefined)[];
    outShape: Shape;
  }): V;
}

/** `ex` as a ValueExecutor; `upload` in its place where a test wants another upload (one that keeps a view's layout). */
export const valuesOf = <V>(ex: SyncExecutor<V>, upload: (t: Tensor) => V = (t) => ex.upload(t)): ValueExecutor<V> => ({
  upload,
  dispatch: (kind, node, attrs, inputs, outShape) => ex.dispatch({ kind, node, attrs, inputs, outShape }),
  download: (v) => ex.download(v),
  release: (v) => ex.release?.(v),
});
