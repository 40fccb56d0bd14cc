// One kernel call on the CPU executor, as the runtime makes it: checkCall holds each call to its op's declaration
// first. Shared by the kernel tests, so that each says only what its call is: kind, node, attributes, inputs, shape.
import type { Shape, Tensor } from "@attngraph/tensor";
import { createCpuExecutor } from "./register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
export const cpu = createCpuExecutor();

/**
 * The output of `kind` run as node `node` (the subject of its errors) on `inputs`, in the op's declared order.
 * @param inputs an absent optional input is undefined; an int32 input (ids, targets) is passed as it is
 */
export function dispatchCpu(
  kind: string,
  node: string,
  attrs: Readonly<Record<string, unknown>>,
  inputs: readonly (Tensor | Tensor<"int32"> | undefined)[],
  outShape: Shape,
): Tensor {
  return cpu.dispatch({ kind, node, attrs, inputs: inputs as readonly (Tensor | undefined)[], outShape });
}
