// What every kernel entry checks before encoding anything, each error naming `<node>.<field>`: a call may come from a
// user dispatching by hand, not only from a validated graph. The same codes and wording as the CPU executor.
// Inputs are float32 unless the op declares the slot int32 (embedding ids, cross-entropy targets): a value of the other
// dtype is an "input" error naming `<node>.<slot>` before anything is encoded, never its bits read as the other type.
import { AttnGraphError, describe, type DType } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import { GpuTensor } from "../gpu-tensor.js";
// Shared by every executor (@attngraph/graph kernel-checks), re-exported under the names this package always used.
import { attrError, checkScale, dtypeError, expectDim, expectHeadGroups, expectRank } from "@attngraph/graph";
export { attrError, checkScale, expectDim, expectHeadGroups, expectRank };

export type Call = KernelCall<GpuTensor>;

/** What an input slot reads: one dtype, or "any" for the view kernels (reshape, transpose, slice), which read nothing. */
export type SlotType = DType | "any";

export function requireInput(call: Call, slot: number, name: string, dtype: SlotType = "float32"): GpuTensor {
  const v = optionalInput(call, slot, name, dtype);
  if (v === undefined) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError(
      "input",
      describe(subject, `missing required input ${slot} (${name}) of op ${call.kind}`, "a tensor", "undefined"),
      {
        subject,
        expected: "a tensor",
        got: "undefined",
      },
    );
  }
  return v;
}

export function optionalInput(
  call: Call,
  slot: number,
  name: string,
  dtype: SlotType = "float32",
): GpuTensor | undefined {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) return undefined;
  if (!(v instanceof GpuTensor)) {
    const subject = `${call.node}.${name}`;
    const got = typeof v === "object" ? "an object that is not a webgpu value (upload it first)" : typeof v;
    throw new AttnGraphError(
      "input",
      describe(subject, `input ${slot} (${name}) of op ${call.kind} is not a webgpu value`, "a GpuTensor", got),
      {
        subject,
        expected: "a GpuTensor",
        got,
      },
    );
  }
  if (dtype !== "any" && v.dtype !== dtype) {
    throw dtypeError(call, slot, name, dtype, v.dtype);
  }
  return v;
}
