// linear-weight-grad: the weight gradient of a projection, dW[o, i] = Σ_r grad[r, o] · x[r, i] over every leading
// position r, i.e. the matmul gradᵀ · x with M = Out, N = In and the rows as the contraction axis K. It runs on the
// tiled matmul every contraction uses (matmul.wgsl.ts): gradᵀ is read through grad's strides (A's row stride is grad's
// last stride, its column stride grad's row stride), x as it is, so nothing is transposed in memory. Leading axes that
// do not collapse into one row stride (see projection's leadingStride) are first copied dense, as projection does.
import type { WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { KernelContext } from "../kernel-context.js";
import { input } from "./inputs.js";
import { matmulProgram } from "./matmul.wgsl.js";
import { leadingStride } from "./projection.wgsl.js";

/**
 * `t` with its leading axes read as one row stride: itself, or a dense copy (pushed to `temps`, for the caller to
 * release) whose rows are its last dim apart.
 */
async function withRowStride(gpu: KernelContext, t: GpuTensor, temps: GpuTensor[]): Promise<[GpuTensor, number]> {
  const row = leadingStride(t);
  if (row !== undefined) return [t, row];
  const copy = await gpu.contiguous(t);
  temps.push(copy);
  return [copy, t.shape[t.rank - 1]!];
}

/** Inputs: grad [..., Out], x [..., In] (the same leading axes) → [Out, In]. */
export const linearWeightGradKernel: WebGpuKernel = async (call, gpu) => {
  const gradIn = input(call, 0);
  const xIn = input(call, 1);
  const nOut = gradIn.shape[gradIn.rank - 1]!;
  const nIn = xIn.shape[xIn.rank - 1]!;
  const rows = gradIn.shape.slice(0, -1).reduce((a, d) => a * d, 1);
  const out = gpu.alloc([nOut, nIn]);
  if (out.size === 0) return out;
  const temps: GpuTensor[] = [];
  try {
    const [grad, gRow] = await withRowStride(gpu, gradIn, temps);
    const [x, xRow] = await withRowStride(gpu, xIn, temps);
    await gpu.run(
      matmulProgram(
        call.kind,
        { m: nOut, n: nIn, k: rows, batches: [1, 1], group: 1 },
        { t: grad, offset: grad.offset, batch: [0, 0], row: grad.strides[grad.rank - 1]!, col: gRow },
        { t: x, offset: x.offset, batch: [0, 0], row: xRow, col: x.strides[x.rank - 1]! },
        undefined,
        out,
      ),
    );
  } catch (e) {
    gpu.release(out);
    throw e;
  } finally {
    for (const t of temps) gpu.release(t);
  }
  return out;
};
