// Shared by the kernel tests: one dispatch from host tensors to a host result, the error a dispatch throws, and GPU
// values that are genuinely strided or offset (an upload is always dense, so these are made with the view kernels:
// transpose, slice and reshape, which only change strides and offset).
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import type { WebGpuExecutor } from "./executor.js";
import { GpuTensor } from "./gpu-tensor.js";

export type Input = AnyTensor | GpuTensor | undefined;

/** A host tensor's values as plain numbers (for toEqual, and compare against a plain array). */
export const values = (t: AnyTensor): number[] => Array.from(t.toFloat32Array());

/** Fused vs unfused on this executor: what the scheduler's swap may change (the executor contract's bound). */
export const FUSED_TOL = { abs: 1e-6, rel: 1e-6 };

export class GpuOps {
  constructor(readonly ex: WebGpuExecutor) {}

  async value(t: Input): Promise<GpuTensor | undefined> {
    return t === undefined || t instanceof GpuTensor ? t : this.ex.upload(t);
  }

  async dispatch(
    kind: string,
    attrs: Record<string, unknown>,
    inputs: readonly Input[],
    outShape: readonly number[],
    node = `test.${kind}`,
  ): Promise<GpuTensor> {
    const values = await Promise.all(inputs.map((t) => this.value(t)));
    return this.ex.dispatch({ kind, node, attrs, inputs: values, outShape });
  }

  /** Uploads, dispatches, downloads. */
  async run(
    kind: string,
    attrs: Record<string, unknown>,
    inputs: readonly Input[],
    outShape: readonly number[],
    node?: string,
  ): Promise<Tensor> {
    const out = await this.dispatch(kind, attrs, inputs, outShape, node);
    const host = await this.ex.download(out);
    this.ex.release(out);
    return host;
  }

  /** What the dispatch threw (undefined if it returned). */
  async error(
    kind: string,
    attrs: Record<string, unknown>,
    inputs: readonly Input[],
    outShape: readonly number[],
    node?: string,
  ): Promise<unknown> {
    return this.dispatch(kind, attrs, inputs, outShape, node).then(
      () => undefined,
      (e: unknown) => e,
    );
  }

  /**
   * A GPU view with `t`'s values and shape whose memory is laid out as `t.permute(perm)`: uploaded in that order and
   * transposed back, so its strides are not row-major (the last axis is not stride 1 unless perm keeps it last).
   */
  async permuted(t: AnyTensor, perm: readonly number[]): Promise<GpuTensor> {
    const inverse = perm.map((_, k) => perm.indexOf(k));
    return this.dispatch("transpose", { perm: inverse }, [t.permute(perm).contiguous()], t.shape);
  }

  /**
   * A GPU view with `t`'s values at a non-zero offset and with every stride doubled: `t` sits in the odd entries of a
   * buffer twice its size after one junk element, and the even entries hold junk (NaN, or -7 for int32), so a kernel
   * that reads outside the view shows it.
   */
  async spaced(t: AnyTensor): Promise<GpuTensor> {
    const n = t.size;
    const int = t.dtype === "int32";
    const flat = int ? t.toInt32Array() : t.toFloat32Array();
    const data = Array.from({ length: 2 * n + 1 }, (_, k) =>
      k % 2 === 1 ? flat[(k - 1) / 2]! : int ? -7 : Number.NaN,
    );
    const wide = int ? Tensor.int32(data, [2 * n + 1]) : Tensor.from(data, [2 * n + 1]);
    const sliced = await this.dispatch("slice", { axis: 0, start: 1, size: 2 * n }, [wide], [2 * n]);
    const pairs = await this.dispatch("reshape", { shape: [n, 2] }, [sliced], [n, 2]);
    const odd = await this.dispatch("slice", { axis: 1, start: 0, size: 1 }, [pairs], [n, 1]);
    return this.dispatch("reshape", { shape: t.shape }, [odd], t.shape);
  }
}
