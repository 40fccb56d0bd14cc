// The host side of the expression kernels (score-mod, mask-mod, the fused attention's modifications): WGSL cannot
// report a gathered read out of range, so a read that bounds.ts cannot prove in range is checked here, before the
// dispatch, by evaluating the expression in JavaScript (compileExpr, the reference semantics): the same ExprIndexError
// as cpu, and the GPU never reads out of range (its reads also clamp).
import type { GatheredTensor } from "@attngraph/graph";
import type { KernelContext } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";

/** Host copies of the gathered inputs (uploads are read without a readback), as compileExpr reads them. */
export async function hostGathered(
  gpu: KernelContext,
  gathered: ReadonlyMap<string, GpuTensor>,
): Promise<Map<string, GatheredTensor>> {
  const out = new Map<string, GatheredTensor>();
  for (const [n, t] of gathered) {
    const h = (await gpu.hostValues(t)).contiguous();
    out.set(n, { data: h.toFloat32Array(), shape: h.shape, strides: h.strides, offset: 0 });
  }
  return out;
}
